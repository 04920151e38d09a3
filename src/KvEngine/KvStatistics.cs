using System.Globalization;
using System.Runtime.CompilerServices;
using System.Text;

namespace KvEngine;

/// <summary>
/// Database statistics (RocksDB's Statistics object): pass one in <see cref="KvOptions.Statistics"/>
/// and read counters by <see cref="Ticker"/> or by RocksDB's ticker name. One instance may be shared
/// by several databases.
/// <para>
/// Thread-safety: counting is lock-free and striped across processors (a stripe per core, on
/// its own cache line) so that threads on different cores do not contend; reads sum the stripes
/// and may miss increments racing with them.
/// </para>
/// </summary>
public sealed class KvStatistics
{
    private const int CacheLineLongs = 8; // 64 bytes: one stripe's counter per cache line
    private static readonly string[] s_names = BuildNames();
    private static readonly int s_tickerCount = s_names.Length;
    private readonly int _stripeMask;
    private readonly long[] _counts;

    /// <summary>Creates a statistics object with every counter at zero.</summary>
    public KvStatistics()
    {
        int stripes = (int)System.Numerics.BitOperations.RoundUpToPowerOf2((uint)Math.Max(1, Environment.ProcessorCount));
        _stripeMask = stripes - 1;
        _counts = new long[stripes * s_tickerCount * CacheLineLongs];
    }

    /// <summary>RocksDB's name for <paramref name="ticker"/>, e.g. "rocksdb.block.cache.hit".</summary>
    public static string TickerName(Ticker ticker) => s_names[(int)ticker];

    /// <summary>The counter's value summed over all stripes.</summary>
    public long GetTickerCount(Ticker ticker)
    {
        long sum = 0;
        for (int s = 0; s <= _stripeMask; s++)
        {
            sum += Volatile.Read(ref _counts[Index(s, ticker)]);
        }
        return sum;
    }

    /// <summary>The counter with RocksDB's <paramref name="name"/>; throws for an unknown name.</summary>
    public long GetTickerCount(string name)
    {
        int i = Array.IndexOf(s_names, name);
        if (i < 0)
        {
            throw new ArgumentException($"Unknown ticker '{name}'.", nameof(name));
        }
        return GetTickerCount((Ticker)i);
    }

    /// <summary>Sets every counter back to zero (RocksDB's Statistics::Reset).</summary>
    public void Reset() => Array.Clear(_counts);

    /// <summary>Every counter as RocksDB's Statistics::ToString prints it: "name COUNT : n" per line.</summary>
    public override string ToString()
    {
        var sb = new StringBuilder();
        for (int t = 0; t < s_tickerCount; t++)
        {
            sb.Append(s_names[t]).Append(" COUNT : ").Append(GetTickerCount((Ticker)t).ToString(CultureInfo.InvariantCulture)).Append('\n');
        }
        return sb.ToString();
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void Record(Ticker ticker, long count = 1)
    {
        int stripe = Thread.GetCurrentProcessorId() & _stripeMask;
        Interlocked.Add(ref _counts[Index(stripe, ticker)], count);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int Index(int stripe, Ticker ticker) => ((stripe * s_tickerCount) + (int)ticker) * CacheLineLongs;

    private static string[] BuildNames()
    {
        var names = new string[Enum.GetValues<Ticker>().Length];
        names[(int)Ticker.BlockCacheMiss] = "rocksdb.block.cache.miss";
        names[(int)Ticker.BlockCacheHit] = "rocksdb.block.cache.hit";
        names[(int)Ticker.BloomFilterUseful] = "rocksdb.bloom.filter.useful";
        names[(int)Ticker.BloomFilterFullPositive] = "rocksdb.bloom.filter.full.positive";
        names[(int)Ticker.BloomFilterFullTruePositive] = "rocksdb.bloom.filter.full.true.positive";
        names[(int)Ticker.BloomFilterPrefixChecked] = "rocksdb.bloom.filter.prefix.checked";
        names[(int)Ticker.BloomFilterPrefixUseful] = "rocksdb.bloom.filter.prefix.useful";
        names[(int)Ticker.MemtableHit] = "rocksdb.memtable.hit";
        names[(int)Ticker.MemtableMiss] = "rocksdb.memtable.miss";
        names[(int)Ticker.GetHitL0] = "rocksdb.l0.hit";
        names[(int)Ticker.GetHitL1] = "rocksdb.l1.hit";
        names[(int)Ticker.GetHitL2AndUp] = "rocksdb.l2andup.hit";
        names[(int)Ticker.NumberKeysWritten] = "rocksdb.number.keys.written";
        names[(int)Ticker.NumberKeysRead] = "rocksdb.number.keys.read";
        names[(int)Ticker.NumberMultiGetCalls] = "rocksdb.number.multiget.get";
        names[(int)Ticker.NumberMultiGetKeysRead] = "rocksdb.number.multiget.keys.read";
        names[(int)Ticker.NumberMultiGetKeysFound] = "rocksdb.number.multiget.keys.found";
        names[(int)Ticker.BytesWritten] = "rocksdb.bytes.written";
        names[(int)Ticker.NumberDbSeek] = "rocksdb.number.db.seek";
        names[(int)Ticker.NumberDbNext] = "rocksdb.number.db.next";
        names[(int)Ticker.NumberDbPrev] = "rocksdb.number.db.prev";
        names[(int)Ticker.WalFileSynced] = "rocksdb.wal.synced";
        names[(int)Ticker.WalFileBytes] = "rocksdb.wal.bytes";
        names[(int)Ticker.WriteDoneBySelf] = "rocksdb.write.self";
        names[(int)Ticker.WriteDoneByOther] = "rocksdb.write.other";
        names[(int)Ticker.FlushWriteBytes] = "rocksdb.flush.write.bytes";
        names[(int)Ticker.CompactReadBytes] = "rocksdb.compact.read.bytes";
        names[(int)Ticker.CompactWriteBytes] = "rocksdb.compact.write.bytes";
        names[(int)Ticker.StallMicros] = "rocksdb.stall.micros";
        names[(int)Ticker.NoFileOpens] = "rocksdb.no.file.opens";
        names[(int)Ticker.BlockReads] = "kvengine.block.reads";
        names[(int)Ticker.BlockReadBytes] = "kvengine.block.read.bytes";
        names[(int)Ticker.BlockCacheAdd] = "rocksdb.block.cache.add";
        names[(int)Ticker.BlockCacheAddFailures] = "rocksdb.block.cache.add.failures";
        names[(int)Ticker.BlockCacheDataHit] = "rocksdb.block.cache.data.hit";
        names[(int)Ticker.BlockCacheDataMiss] = "rocksdb.block.cache.data.miss";
        names[(int)Ticker.BlockCacheIndexHit] = "rocksdb.block.cache.index.hit";
        names[(int)Ticker.BlockCacheIndexMiss] = "rocksdb.block.cache.index.miss";
        names[(int)Ticker.BlockCacheFilterHit] = "rocksdb.block.cache.filter.hit";
        names[(int)Ticker.BlockCacheFilterMiss] = "rocksdb.block.cache.filter.miss";
        names[(int)Ticker.BlockCacheBytesInsert] = "rocksdb.block.cache.bytes.insert";
        names[(int)Ticker.BlockCacheDataAdd] = "rocksdb.block.cache.data.add";
        names[(int)Ticker.BlockCacheDataBytesInsert] = "rocksdb.block.cache.data.bytes.insert";
        names[(int)Ticker.BlockCacheIndexAdd] = "rocksdb.block.cache.index.add";
        names[(int)Ticker.BlockCacheIndexBytesInsert] = "rocksdb.block.cache.index.bytes.insert";
        names[(int)Ticker.BlockCacheFilterAdd] = "rocksdb.block.cache.filter.add";
        names[(int)Ticker.BlockCacheFilterBytesInsert] = "rocksdb.block.cache.filter.bytes.insert";
        names[(int)Ticker.BlockCacheInsertRequestedBytes] = "kvengine.block.cache.insert.requested.bytes";
        names[(int)Ticker.BlockCacheInsertAllocatedBytes] = "kvengine.block.cache.insert.allocated.bytes";
        names[(int)Ticker.SecondaryCacheHits] = "rocksdb.secondary.cache.hits";
        names[(int)Ticker.SecondaryCacheMisses] = "kvengine.secondary.cache.misses";
        names[(int)Ticker.CompressedSecondaryCacheDummyHits] = "rocksdb.compressed.secondary.cache.dummy.hits";
        names[(int)Ticker.CompressedSecondaryCacheHits] = "rocksdb.compressed.secondary.cache.hits";
        names[(int)Ticker.SecondaryCachePromotedRequestedBytes] = "kvengine.secondary.cache.promoted.requested.bytes";
        names[(int)Ticker.SecondaryCachePromotedAllocatedBytes] = "kvengine.secondary.cache.promoted.allocated.bytes";
        names[(int)Ticker.CompactionKeyDropUser] = "rocksdb.compaction.key.drop.user";
        foreach (string n in names)
        {
            if (n == null)
            {
                throw new InvalidOperationException("A ticker lacks a name.");
            }
        }
        return names;
    }
}
