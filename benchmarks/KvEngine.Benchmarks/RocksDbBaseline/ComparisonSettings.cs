namespace KvEngine.Benchmarks.RocksDbBaseline;

/// <summary>
/// The settings both engines run with in the KvEngine-vs-RocksDB suites, issue 13's standard run:
/// LZ4, a 10-bit Bloom filter (RocksDB's full "fast local" Bloom), 4 KiB blocks, XXH3 checksums
/// verified on read, 64 MiB write buffers, index and filter blocks held by the table reader (not in
/// the cache), 16-byte keys and 100-byte values half of which compress. Stateless.
/// </summary>
internal static class ComparisonSettings
{
    public const double BloomBitsPerKey = 10;
    public const int BlockSize = 4096;
    public const long WriteBufferSize = 64L << 20;

    /// <summary>KvEngine's options for these settings, with <paramref name="cache"/> as the block cache.</summary>
    public static KvOptions KvOptions(KvBlockCache cache) => new()
    {
        CreateIfMissing = true,
        BlockCache = cache,
        Compression = KvCompressionType.Lz4,
        BloomBitsPerKey = BloomBitsPerKey,
        BlockSize = BlockSize,
        Checksum = KvChecksumType.XxHash3,
        WriteBufferSize = WriteBufferSize,
    };

    /// <summary>A value of <paramref name="length"/> bytes whose first half is random and second half repeats it (compresses to about half).</summary>
    public static byte[] HalfCompressibleValue(int length, int seed)
    {
        byte[] value = BenchData.RandomBytes(length, seed);
        int half = length / 2;
        for (int i = half; i < length; i++)
        {
            value[i] = value[i - half];
        }
        return value;
    }
}
