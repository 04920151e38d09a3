using Snappier;

namespace KvEngine.Compression;

/// <summary>
/// Snappy: RocksDB stores kSnappyCompression blocks as plain Snappy output, whose own varint32
/// header is the uncompressed length. Compression is the managed Snappier (flushes and
/// compactions); decompression, on the read path, is <see cref="SnappyDecoder"/>, which
/// allocates nothing (Snappier allocates a decompressor object per call) and turns malformed
/// input into -1, so no codec exception reaches a reader. Stateless and thread-safe.
/// </summary>
internal static class SnappyCodec
{
    public static int MaxCompressedLength(int sourceLength) => Snappy.GetMaxCompressedLength(sourceLength);

    /// <summary>Compresses into <paramref name="destination"/>; returns the length, or 0 when it did not fit.</summary>
    public static int Compress(ReadOnlySpan<byte> source, Span<byte> destination) =>
        Snappy.TryCompress(source, destination, out int written) ? written : 0;

    /// <summary>Decompresses a whole Snappy buffer; returns the length written, or -1 when it is malformed.</summary>
    public static int Decompress(ReadOnlySpan<byte> source, Span<byte> destination) =>
        SnappyDecoder.Decompress(source, destination);
}
