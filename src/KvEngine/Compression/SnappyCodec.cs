using Snappier;

namespace KvEngine.Compression;

/// <summary>
/// Snappy through the managed Snappier. RocksDB stores kSnappyCompression blocks as plain Snappy
/// output, whose own varint32 header is the uncompressed length. Every failure of the package on
/// malformed input is turned into a -1 result here, so no codec exception reaches a reader.
/// Stateless and thread-safe.
/// </summary>
internal static class SnappyCodec
{
    public static int MaxCompressedLength(int sourceLength) => Snappy.GetMaxCompressedLength(sourceLength);

    /// <summary>Compresses into <paramref name="destination"/>; returns the length, or 0 when it did not fit.</summary>
    public static int Compress(ReadOnlySpan<byte> source, Span<byte> destination) =>
        Snappy.TryCompress(source, destination, out int written) ? written : 0;

    /// <summary>Decompresses a whole Snappy buffer; returns the length written, or -1 when it is malformed.</summary>
    public static int Decompress(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        try
        {
            return Snappy.TryDecompress(source, destination, out int written) ? written : -1;
        }
#pragma warning disable CA1031 // any failure of the decoder on stored bytes is corruption, reported by the caller
        catch (Exception)
#pragma warning restore CA1031
        {
            return -1;
        }
    }
}
