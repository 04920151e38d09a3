using KvEngine.Db.State;
using KvEngine.Versions;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Db;

/// <summary>
/// What the metrics' observable gauges read (<see cref="Diagnostics.DbTelemetry"/>), when a
/// listener collects: lock-free snapshots through a pinned read state. Never called after Close
/// has begun (the telemetry unregisters first).
/// </summary>
internal sealed partial class DbImpl
{
    /// <summary>Approximate memory of every family's mutable and immutable memtables (rocksdb.cur-size-all-mem-tables summed).</summary>
    public long MemTableBytes()
    {
        long sum = 0;
        foreach (ColumnFamilyData? cfd in _families.ById)
        {
            if (cfd == null)
            {
                continue;
            }
            ReadState state = cfd.AcquireReadState();
            try
            {
                sum += Stats.InternalStats.AllMemTableBytes(state);
            }
            finally
            {
                state.Unref();
            }
        }
        return sum;
    }

    /// <summary>Bytes charged to the block cache (rocksdb.block-cache-usage).</summary>
    public long BlockCacheUsageBytes() => _blockCache.Usage;

    /// <summary>Fills <paramref name="values"/> (one per level) with each level's table bytes, or its file count, over every family.</summary>
    public void LevelSizes(Span<long> values, bool files)
    {
        values.Clear();
        foreach (ColumnFamilyData? cfd in _families.ById)
        {
            if (cfd == null)
            {
                continue;
            }
            Version v = cfd.Versions.Current;
            for (int level = 0; level < values.Length && level < Version.NumLevels; level++)
            {
                values[level] += files ? v.NumFiles(level) : v.LevelBytes(level);
            }
        }
    }
}
