using System.Globalization;
using System.Text;
using KvEngine.Db.Errors;
using KvEngine.Db.State;
using KvEngine.Versions;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Db.Stats;

/// <summary>
/// GetProperty (RocksDB's InternalStats::GetStringProperty): RocksDB's property names where one
/// exists, for one column family; the block-cache, snapshot, background-error and sequence
/// properties are the database's. Memtable and table figures come from the family's pinned read
/// state (no lock); those of the compaction picker and the running flush are read under the
/// database mutex, which guards them.
/// <para>
/// Thread-safety: any thread; holds no state of its own.
/// </para>
/// </summary>
internal sealed class InternalStats
{
    private const string NumFilesAtLevelPrefix = "rocksdb.num-files-at-level";

    private readonly DbMutex _mutex;
    private readonly VersionSet _versions;
    private readonly SnapshotList _snapshots;
    private readonly KvBlockCache _blockCache;
    private readonly ErrorHandler _errors;

    public InternalStats(DbMutex mutex, VersionSet versions, SnapshotList snapshots, KvBlockCache blockCache, ErrorHandler errors)
    {
        _mutex = mutex;
        _versions = versions;
        _snapshots = snapshots;
        _blockCache = blockCache;
        _errors = errors;
    }

    /// <summary>The property <paramref name="name"/> of <paramref name="cfd"/>, or null for a name it does not know.</summary>
    public string? GetProperty(ColumnFamilyData cfd, string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        CultureInfo c = CultureInfo.InvariantCulture;
        if (name.StartsWith(NumFilesAtLevelPrefix, StringComparison.Ordinal))
        {
            if (int.TryParse(name.AsSpan(NumFilesAtLevelPrefix.Length), NumberStyles.None, c, out int level) &&
                level < Version.NumLevels)
            {
                return cfd.Versions.Current.NumFiles(level).ToString(c);
            }
            return null;
        }
        ReadState state = cfd.AcquireReadState();
        try
        {
            switch (name)
            {
                case "rocksdb.num-immutable-mem-table":
                    return state.Immutable.Length.ToString(c);
                case "rocksdb.cur-size-active-mem-table":
                    return state.Mem.ApproximateMemoryUsage.ToString(c);
                case "rocksdb.cur-size-all-mem-tables":
                    return AllMemTableBytes(state).ToString(c);
                case "rocksdb.size-all-mem-tables":
                    {
                        long pinned;
                        using (_mutex.Lock())
                        {
                            pinned = cfd.FlushedButPinnedBytes();
                        }
                        return (AllMemTableBytes(state) + pinned).ToString(c);
                    }
                case "rocksdb.num-entries-active-mem-table":
                    return state.Mem.NumEntries.ToString(c);
                case "rocksdb.num-deletes-active-mem-table":
                    return state.Mem.NumDeletes.ToString(c);
                case "rocksdb.num-entries-imm-mem-tables":
                    return SumImmutable(state, static m => m.NumEntries).ToString(c);
                case "rocksdb.num-deletes-imm-mem-tables":
                    return SumImmutable(state, static m => m.NumDeletes).ToString(c);
                case "rocksdb.num-snapshots":
                    return _snapshots.Count.ToString(c);
                case "rocksdb.total-sst-files-size":
                case "rocksdb.live-sst-files-size":
                    {
                        long sum = 0;
                        for (int level = 0; level < Version.NumLevels; level++)
                        {
                            sum += state.Version.LevelBytes(level);
                        }
                        return sum.ToString(c);
                    }
                case "rocksdb.estimate-live-data-size":
                    return SizeApproximation.EstimateLiveDataSize(state.Version).ToString(c);
                case "rocksdb.levelstats":
                    return LevelStats(state.Version);
                case "rocksdb.stats":
                    return CompactionStatsText(cfd, state.Version);
                case "rocksdb.compaction-pending":
                    using (_mutex.Lock())
                    {
                        // A read-triggered request (never made with auto compactions off: no budget) counts
                        // while level 0 has files: the picker takes it next.
                        bool pending = cfd.Picker.NeedsCompaction(state.Version) ||
                            (cfd.Level0Reads.Requested && state.Version.NumFiles(0) > 0);
                        return (pending ? 1 : 0).ToString(c);
                    }
                case "rocksdb.num-running-compactions":
                    using (_mutex.Lock())
                    {
                        return cfd.Picker.RunningCount.ToString(c);
                    }
                case "rocksdb.num-running-flushes":
                    using (_mutex.Lock())
                    {
                        return (cfd.FlushRunning ? 1 : 0).ToString(c);
                    }
                case "rocksdb.block-cache-capacity":
                    return _blockCache.Capacity.ToString(c);
                case "rocksdb.block-cache-usage":
                    return _blockCache.Usage.ToString(c);
                case "rocksdb.block-cache-pinned-usage":
                    return _blockCache.PinnedUsage.ToString(c);
                case "rocksdb.estimate-table-readers-mem":
                    return cfd.Tables.ApproximateReadersMemory().ToString(c);
                case "rocksdb.block-cache-entry-stats":
                    return BlockCacheEntryStats.Format(_blockCache.Primary);
                case "rocksdb.background-errors":
                    return _errors.ErrorCount.ToString(c);
                case "kvengine.background-error":
                    lock (_mutex)
                    {
                        return _errors.Error?.Message ?? string.Empty;
                    }
                case "kvengine.latest-sequence-number":
                    return _versions.LastSequence.ToString(c);
                case "kvengine.next-file-number":
                    return _versions.NextFileNumberPeek.ToString(c);
                default:
                    return null;
            }
        }
        finally
        {
            state.Unref();
        }
    }

    private string CompactionStatsText(ColumnFamilyData cfd, Version v)
    {
        double[] scores;
        var busy = new int[Version.NumLevels];
        using (_mutex.Lock())
        {
            scores = cfd.Picker.ComputeScores(v, Compaction.LevelTargets.Compute(v, cfd.CompactionOptions));
            for (int level = 0; level < Version.NumLevels; level++)
            {
                foreach (Versions.FileMetaData f in v.Files(level))
                {
                    if (cfd.Picker.IsBeingCompacted(f.Number))
                    {
                        busy[level]++;
                    }
                }
            }
        }
        return cfd.CompactionStats.Format(v, scores, busy, cfd.Name);
    }

    /// <summary>Approximate memory of a read state's mutable and immutable memtables (rocksdb.cur-size-all-mem-tables).</summary>
    public static long AllMemTableBytes(ReadState state) =>
        state.Mem.ApproximateMemoryUsage + SumImmutable(state, static m => m.ApproximateMemoryUsage);

    /// <summary>The sum of <paramref name="of"/> over a read state's immutable memtables.</summary>
    private static long SumImmutable(ReadState state, Func<Memtable.MemTable, long> of)
    {
        long sum = 0;
        foreach (Memtable.MemTable m in state.Immutable)
        {
            sum += of(m);
        }
        return sum;
    }

    private static string LevelStats(Version v)
    {
        var sb = new StringBuilder();
        sb.Append("Level Files Size(MB)\n--------------------\n");
        for (int level = 0; level < Version.NumLevels; level++)
        {
            sb.Append(CultureInfo.InvariantCulture, $"{level,5} {v.NumFiles(level),5} {v.LevelBytes(level) / 1048576.0,8:F0}\n");
        }
        return sb.ToString();
    }
}
