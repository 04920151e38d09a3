using System.Buffers;
using KvEngine.Cache;
using KvEngine.Filters;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Storage;
using KvEngine.Table;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Fuzz.Targets;

/// <summary>
/// Table reader target: the input is a whole .sst file, opened from the in-memory file system
/// (<see cref="FaultInjectionFileSystem"/>) the way the table cache opens one — footer, metaindex,
/// properties, index (plain or partitioned), filter (full or partitioned) and range-deletion block —
/// then read in full: a forward and a backward scan, seeks, point lookups, filter probes and
/// approximate offsets for keys found in the table and one that is not. Twice: with the metadata
/// in the reader, and with it in a block cache (pinned), which takes the other read paths.
/// Decompressed blocks are capped at 4 MiB (the engine's default allows 128 MiB) so an input
/// claiming a huge block costs little. Thread-safe (shared options are immutable; the cache is).
/// </summary>
internal static class TableTarget
{
    private const string Path = "/fuzz/000007.sst";
    private const int MaxScan = 100_000;
    private const int MaxProbeKeys = 32;

    private static readonly TableOptions s_readerOptions = new()
    {
        FilterPolicy = new FastLocalBloomPolicy(),
        MaxUncompressedBlockSize = 4 << 20,
    };

    private static readonly TableOptions s_cachedOptions = new()
    {
        FilterPolicy = new FastLocalBloomPolicy(),
        MaxUncompressedBlockSize = 4 << 20,
        BlockCache = new LruCache(new LruCacheOptions { Capacity = 8 << 20, NumShardBits = 0 }),
        CacheIndexAndFilterBlocks = true,
        PinL0FilterAndIndexBlocksInCache = true,
    };

    public static void Run(ReadOnlySpan<byte> input)
    {
        Exercise(input, s_readerOptions, maybeFlushed: false);
        Exercise(input, s_cachedOptions, maybeFlushed: true);
    }

    private static void Exercise(ReadOnlySpan<byte> input, TableOptions options, bool maybeFlushed)
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/fuzz");
        fs.WriteAllBytes(Path, input);
        using TableReader reader = TableReader.Open(fs.OpenRandomAccess(Path), input.Length, options, Path, maybeFlushed);
        reader.LoadRangeTombstones(lower: null, upper: null);
        using (InternalIterator? tombstones = reader.NewRangeTombstoneIterator())
        {
            if (tombstones != null)
            {
                Drain(tombstones, forward: true);
            }
        }

        var keys = new List<byte[]>();
        using (InternalIterator it = reader.NewIterator(verifyChecksums: true))
        {
            int n = 0;
            for (it.SeekToFirst(); it.Valid && n < MaxScan; it.Next(), n++)
            {
                Consume(it);
                if (keys.Count < MaxProbeKeys)
                {
                    keys.Add(it.Key.ToArray());
                }
            }
            Drain(it, forward: false);
            foreach (byte[] key in keys)
            {
                it.Seek(key);
                if (it.Valid)
                {
                    Consume(it);
                }
                it.SeekForPrev(key);
                if (it.Valid)
                {
                    Consume(it);
                }
            }
        }

        var value = new ArrayBufferWriter<byte>();
        keys.Add(InternalKeys.Create("\xff\xff no such key"u8, 1, ValueType.Value));
        foreach (byte[] key in keys)
        {
            ReadOnlySpan<byte> userKey = InternalKeys.UserKey(key);
            value.Clear();
            reader.TryGet(userKey, InternalKeys.MaxSequenceNumber, value, out _, verifyChecksums: true);
            reader.KeyMayMatch(userKey);
            reader.ApproximateOffsetOf(userKey);
        }
    }

    private static void Drain(InternalIterator it, bool forward)
    {
        int n = 0;
        if (forward)
        {
            for (it.SeekToFirst(); it.Valid && n < MaxScan; it.Next(), n++)
            {
                Consume(it);
            }
        }
        else
        {
            for (it.SeekToLast(); it.Valid && n < MaxScan; it.Prev(), n++)
            {
                Consume(it);
            }
        }
    }

    /// <summary>Reads an entry the way the engine's consumers do: user key, sequence, type, value.</summary>
    private static void Consume(InternalIterator it)
    {
        ReadOnlySpan<byte> key = it.Key;
        _ = InternalKeys.UserKey(key);
        _ = InternalKeys.Sequence(key);
        _ = InternalKeys.Type(key);
        _ = it.Value.Length;
    }
}
