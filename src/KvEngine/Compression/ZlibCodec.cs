using System.IO.Compression;

namespace KvEngine.Compression;

/// <summary>
/// Reads RocksDB's kZlibCompression blocks: raw deflate (RocksDB calls deflateInit2 with negative
/// window bits, so no zlib header) after the varint32 size prefix. Decoding only: .NET's encoder
/// uses a 32 KiB window while RocksDB inflates with 16 KiB, so blocks we wrote might not be
/// readable by RocksDB; KvEngine therefore does not write Zlib. Stateless and thread-safe.
/// </summary>
internal static unsafe class ZlibCodec
{
    /// <summary>Inflates into exactly <paramref name="destination"/>; returns the bytes produced, -1 when malformed.</summary>
    public static long Decompress(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        fixed (byte* src = source)
        {
            using var input = new UnmanagedMemoryStream(src, source.Length);
            using var inflater = new DeflateStream(input, CompressionMode.Decompress);
            try
            {
                int total = 0;
                while (total < destination.Length)
                {
                    int n = inflater.Read(destination[total..]);
                    if (n == 0)
                    {
                        break;
                    }
                    total += n;
                }
                Span<byte> probe = stackalloc byte[1];
                return inflater.Read(probe) == 0 ? total : -1; // more output than declared is malformed
            }
            catch (InvalidDataException)
            {
                return -1;
            }
        }
    }
}
