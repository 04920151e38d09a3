using System.Buffers.Binary;
using System.Runtime.CompilerServices;

namespace KvEngine.Compression;

/// <summary>
/// A Snappy decoder over spans that allocates nothing (Snappier, used for compression, creates a
/// decompressor object per call, and a table read must not allocate). Written from Snappy's
/// format description (format_description.txt):
/// <code>
/// snappy   := uncompressed_length: varint32  element*
/// element  := tag: byte, by its low two bits:
///   00 literal : length-1 in tag bits 2..7 when below 60; 60..63: the next 1..4 bytes (LE) hold length-1;
///                then the literal bytes
///   01 copy    : length 4 + tag bits 2..4; offset = tag bits 5..7 &lt;&lt; 8 | next byte
///   10 copy    : length 1 + tag bits 2..7; offset = next 2 bytes (LE)
///   11 copy    : length 1 + tag bits 2..7; offset = next 4 bytes (LE)
/// </code>
/// A copy repeats <c>length</c> bytes starting <c>offset</c> bytes back in the output (the ranges
/// may overlap, which repeats a pattern). Every length and offset is checked against the input
/// and the output, so malformed input gives -1, never a read or write outside the spans.
/// Stateless and thread-safe.
/// </summary>
internal static class SnappyDecoder
{
    /// <summary>The uncompressed length the preamble declares; false when it is malformed.</summary>
    public static bool TryGetUncompressedLength(ReadOnlySpan<byte> input, out int length, out int preambleLength)
    {
        length = 0;
        preambleLength = 0;
        uint value = 0;
        for (int shift = 0, i = 0; i < 5 && i < input.Length; i++, shift += 7)
        {
            byte b = input[i];
            if (i == 4 && b > 0x0F)
            {
                return false; // more than 32 bits
            }
            value |= (uint)(b & 0x7F) << shift;
            if (b < 0x80)
            {
                if (value > int.MaxValue)
                {
                    return false;
                }
                length = (int)value;
                preambleLength = i + 1;
                return true;
            }
        }
        return false;
    }

    /// <summary>
    /// Decodes <paramref name="input"/> (preamble included) into <paramref name="output"/>, whose
    /// length must be the declared one; returns that length, or -1 when the input is malformed or
    /// declares another length.
    /// </summary>
    public static int Decompress(ReadOnlySpan<byte> input, Span<byte> output)
    {
        if (!TryGetUncompressedLength(input, out int declared, out int pos) || declared != output.Length)
        {
            return -1;
        }
        int written = 0;
        while (pos < input.Length)
        {
            byte tag = input[pos++];
            int length;
            int offset;
            switch (tag & 3)
            {
                case 0:
                    length = (tag >> 2) + 1;
                    if (length > 60)
                    {
                        int extra = length - 60; // 1..4 bytes of length-1 follow
                        if (input.Length - pos < extra)
                        {
                            return -1;
                        }
                        uint raw = extra switch
                        {
                            1 => input[pos],
                            2 => BinaryPrimitives.ReadUInt16LittleEndian(input.Slice(pos)),
                            3 => (uint)(input[pos] | (input[pos + 1] << 8) | (input[pos + 2] << 16)),
                            _ => BinaryPrimitives.ReadUInt32LittleEndian(input.Slice(pos)),
                        };
                        pos += extra;
                        if (raw >= int.MaxValue)
                        {
                            return -1;
                        }
                        length = (int)raw + 1;
                    }
                    if (input.Length - pos < length || output.Length - written < length)
                    {
                        return -1;
                    }
                    input.Slice(pos, length).CopyTo(output.Slice(written));
                    pos += length;
                    written += length;
                    continue;
                case 1:
                    if (pos >= input.Length)
                    {
                        return -1;
                    }
                    length = 4 + ((tag >> 2) & 7);
                    offset = ((tag >> 5) << 8) | input[pos++];
                    break;
                case 2:
                    if (input.Length - pos < 2)
                    {
                        return -1;
                    }
                    length = (tag >> 2) + 1;
                    offset = BinaryPrimitives.ReadUInt16LittleEndian(input.Slice(pos));
                    pos += 2;
                    break;
                default:
                    if (input.Length - pos < 4)
                    {
                        return -1;
                    }
                    length = (tag >> 2) + 1;
                    uint offset32 = BinaryPrimitives.ReadUInt32LittleEndian(input.Slice(pos));
                    pos += 4;
                    if (offset32 > int.MaxValue)
                    {
                        return -1;
                    }
                    offset = (int)offset32;
                    break;
            }
            if (offset == 0 || offset > written || output.Length - written < length)
            {
                return -1;
            }
            Copy(output, written, offset, length);
            written += length;
        }
        return written == output.Length ? written : -1;
    }

    /// <summary>Appends <paramref name="length"/> bytes from <paramref name="offset"/> back (bounds checked by the caller).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void Copy(Span<byte> output, int written, int offset, int length)
    {
        if (offset >= length)
        {
            output.Slice(written - offset, length).CopyTo(output.Slice(written));
            return;
        }
        // Overlapping: the pattern of `offset` bytes repeats; copy it in doubling chunks.
        int done = 0;
        while (done < length)
        {
            int chunk = Math.Min(offset + done, length - done);
            output.Slice(written - offset, chunk).CopyTo(output.Slice(written + done));
            done += chunk;
        }
    }
}
