using BenchmarkDotNet.Attributes;
using KvEngine.Cache;
using KvEngine.Memory;

namespace KvEngine.Benchmarks;

/// <summary>
/// The compressed secondary cache's per-entry work with the size-class split on and off (PR 10287):
/// <see cref="SplitAndMerge"/> is the split alone (cut already-compressed bytes into chunks, merge
/// and verify them back, free), <see cref="DemoteAndPromote"/> the whole path of one block that
/// goes down and comes back (LZ4 compression, split, merge, CRC check, decompression into a new
/// native buffer). The blocks are 4 KiB of 16-byte keys and 100-byte values that compress to about
/// half, as db_bench writes them. Reported per block. Public and unsealed for BenchmarkDotNet;
/// single-threaded.
/// </summary>
[MemoryDiagnoser]
[SimpleJob(launchCount: 1, warmupCount: 3, iterationCount: 7)]
public class SecondaryCacheBenchmarks
{
    private const int Blocks = 256;
    private const int BlockSize = 4096;

    private byte[][] _blocks = [];
    private byte[][] _compressed = [];
    private byte[] _merged = [];
    private CompressedSecondaryCache? _cache;

    [Params(false, true)]
    public bool Split { get; set; }

    [GlobalSetup]
    public void GlobalSetup()
    {
        _cache = new CompressedSecondaryCache(new CompressedSecondaryCacheOptions
        {
            Capacity = 64L << 20,
            Split = Split,
            Allocator = NativeAllocator.Shared,
        });
        _blocks = new byte[Blocks][];
        _compressed = new byte[Blocks][];
        for (int b = 0; b < Blocks; b++)
        {
            _blocks[b] = HalfCompressibleBlock(b);
            CompressedSecondaryEntry entry = _cache.Compress(_blocks[b], CacheEntryRole.Data);
            _compressed[b] = new byte[entry.StoredLength];
            if (!entry.TryMerge(_compressed[b]))
            {
                throw new InvalidOperationException("merge failed in setup");
            }
            entry.Free();
        }
        _merged = new byte[BlockSize * 2];
    }

    [GlobalCleanup]
    public void GlobalCleanup() => _cache?.Dispose();

    /// <summary>Chunks from the allocator, copy in, merge with the CRC check, free.</summary>
    [Benchmark(OperationsPerInvoke = Blocks)]
    public int SplitAndMerge()
    {
        int total = 0;
        for (int b = 0; b < Blocks; b++)
        {
            byte[] stored = _compressed[b];
            CompressedSecondaryEntry entry = CompressedSecondaryEntry.Create(stored, BlockSize, Compression.CompressionType.Lz4, CacheEntryRole.Data, NativeAllocator.Shared, Split);
            if (entry.TryMerge(_merged.AsSpan(0, stored.Length)))
            {
                total += entry.ChunkCount;
            }
            entry.Free();
        }
        return total;
    }

    /// <summary>Compress and store, then merge, verify and decompress into a new buffer, free both.</summary>
    [Benchmark(OperationsPerInvoke = Blocks)]
    public long DemoteAndPromote()
    {
        CompressedSecondaryCache cache = _cache!;
        long total = 0;
        for (int b = 0; b < Blocks; b++)
        {
            CompressedSecondaryEntry entry = cache.Compress(_blocks[b], CacheEntryRole.Data);
            if (cache.TryMaterialize(entry, out NativeBuffer contents))
            {
                total += contents.Length;
                contents.Dispose();
            }
            entry.Free();
        }
        return total;
    }

    /// <summary>32 entries of a 16-byte key and a 100-byte value whose second half repeats its first.</summary>
    private static byte[] HalfCompressibleBlock(int seed)
    {
        byte[] block = BenchData.RandomBytes(BlockSize, seed + 100);
        for (int offset = 0; offset + 116 <= BlockSize; offset += 116)
        {
            block.AsSpan(offset + 16, 50).CopyTo(block.AsSpan(offset + 66, 50));
        }
        return block;
    }
}
