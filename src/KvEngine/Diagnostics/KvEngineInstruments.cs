using System.Diagnostics.Metrics;
using System.Runtime.CompilerServices;
using KvEngine.Compaction;
using KvEngine.Versions;

namespace KvEngine.Diagnostics;

/// <summary>
/// The instruments of one "KvEngine" <see cref="Meter"/>, shared by every database publishing on
/// it (an <see cref="IMeterFactory"/> hands the same meter to every open of a host), each
/// measurement tagged with its database (<see cref="KvEngineDiagnostics.DbNamespaceTag"/>).
/// <para>
/// Nothing here runs on the read or write path. Counters of reads, writes, bytes and block-cache
/// lookups are observable: their callbacks read <see cref="KvStatistics"/> (present only when the
/// database has <see cref="KvOptions.Statistics"/>) and <see cref="EngineCounters"/> when a
/// listener collects. Histograms are recorded once per flush, compaction and write stall.
/// </para>
/// <para>
/// Thread-safety: <see cref="Register"/>, <see cref="Unregister"/> and the observable callbacks
/// take <see cref="_lock"/>, so once Unregister returns no callback reads that database again
/// (its Close may then release what the callbacks read). Histograms are thread-safe.
/// </para>
/// </summary>
internal sealed class KvEngineInstruments
{
    private static readonly ConditionalWeakTable<Meter, KvEngineInstruments> s_byMeter = new();
    private static readonly object[] s_levels = BoxLevels();
    private readonly object _lock = new();
    private readonly List<DbTelemetry> _dbs = new();

    private KvEngineInstruments(Meter meter)
    {
        FlushDuration = meter.CreateHistogram<double>("kvengine.flush.duration", "s",
            "Duration of memtable flushes (one measurement per level-0 table written).");
        CompactionDuration = meter.CreateHistogram<double>("kvengine.compaction.duration", "s",
            "Duration of compactions, trivial moves and FIFO deletions included; tag level = output level.");
        WriteStallDuration = meter.CreateHistogram<double>("kvengine.write.stall.duration", "s",
            "How long a write group waited in one write stall; tag cause = level0_slowdown, level0_stop or memtable_limit.");

        meter.CreateObservableCounter<long>("kvengine.flushes", () => Observe(static t => t.Counters.Flushes), "{flush}",
            "Memtable flushes completed.");
        meter.CreateObservableCounter<long>("kvengine.flush.bytes", () => Observe(static t => t.Counters.FlushWriteBytes), "By",
            "Bytes of level-0 tables written by flushes (rocksdb.flush.write.bytes).");
        meter.CreateObservableCounter<long>("kvengine.compactions", () => Observe(static t => t.Counters.Compactions), "{compaction}",
            "Compactions completed, trivial moves included.");
        meter.CreateObservableCounter<long>("kvengine.compactions.read_triggered", () => Observe(static t => t.Counters.ReadTriggeredCompactions), "{compaction}",
            "Compactions of level 0 that point lookups asked for (read-triggered; included in kvengine.compactions).");
        meter.CreateObservableCounter<long>("kvengine.compaction.bytes", ObserveCompactionBytes, "By",
            "Bytes of table files read and written by compactions; tag direction = read or write (rocksdb.compact.read.bytes, rocksdb.compact.write.bytes).");
        meter.CreateObservableCounter<double>("kvengine.write.stall.time", () => Observe(static t => t.Counters.StallMicros / 1e6), "s",
            "Time writers spent delayed or stopped by write stalls (rocksdb.stall.micros).");

        meter.CreateObservableCounter<long>("kvengine.reads", () => ObserveTicker(Ticker.NumberKeysRead), "{read}",
            "Point lookups (Get, TryGet) (rocksdb.number.keys.read). Needs KvOptions.Statistics.");
        meter.CreateObservableCounter<long>("kvengine.writes", () => ObserveTicker(Ticker.NumberKeysWritten), "{record}",
            "Records (Put, Delete, ...) written (rocksdb.number.keys.written). Needs KvOptions.Statistics.");
        meter.CreateObservableCounter<long>("kvengine.write.bytes", () => ObserveTicker(Ticker.BytesWritten), "By",
            "Bytes of write batches written (rocksdb.bytes.written). Needs KvOptions.Statistics.");
        meter.CreateObservableCounter<long>("kvengine.block.read.bytes", () => ObserveTicker(Ticker.BlockReadBytes), "By",
            "Bytes of blocks read from table files, i.e. not served by the block cache (kvengine.block.read.bytes). Needs KvOptions.Statistics.");
        meter.CreateObservableCounter<long>("kvengine.block_cache.hits", () => ObserveTicker(Ticker.BlockCacheHit), "{lookup}",
            "Block lookups served by the block cache (rocksdb.block.cache.hit). Needs KvOptions.Statistics.");
        meter.CreateObservableCounter<long>("kvengine.block_cache.misses", () => ObserveTicker(Ticker.BlockCacheMiss), "{lookup}",
            "Block lookups the block cache missed (rocksdb.block.cache.miss). Needs KvOptions.Statistics.");

        meter.CreateObservableGauge<long>("kvengine.memtable.size", () => Observe(static t => t.MemTableBytes()), "By",
            "Approximate memory of the mutable and immutable memtables (rocksdb.cur-size-all-mem-tables).");
        meter.CreateObservableGauge<long>("kvengine.block_cache.usage", () => Observe(static t => t.BlockCacheUsage()), "By",
            "Bytes charged to the block cache (rocksdb.block-cache-usage); a cache shared by several databases reports the same usage for each.");
        meter.CreateObservableGauge<long>("kvengine.level.size", ObserveLevelBytes, "By",
            "Bytes of table files per level; tag level.");
        meter.CreateObservableGauge<long>("kvengine.level.files", ObserveLevelFiles, "{file}",
            "Table files per level (rocksdb.num-files-at-level<N>); tag level.");
    }

    public Histogram<double> FlushDuration { get; }

    public Histogram<double> CompactionDuration { get; }

    public Histogram<double> WriteStallDuration { get; }

    /// <summary>The instruments on <paramref name="meter"/>, created at its first use.</summary>
    public static KvEngineInstruments For(Meter meter) => s_byMeter.GetValue(meter, static m => new KvEngineInstruments(m));

    /// <summary>The boxed tag value of <paramref name="level"/> (no allocation per measurement).</summary>
    public static object LevelTag(int level) => (uint)level < (uint)s_levels.Length ? s_levels[level] : level;

    public void Register(DbTelemetry db)
    {
        lock (_lock)
        {
            _dbs.Add(db);
        }
    }

    public void Unregister(DbTelemetry db)
    {
        lock (_lock)
        {
            _dbs.Remove(db);
        }
    }

    private List<Measurement<T>> Observe<T>(Func<DbTelemetry, T> read)
        where T : struct
    {
        lock (_lock)
        {
            var result = new List<Measurement<T>>(_dbs.Count);
            foreach (DbTelemetry db in _dbs)
            {
                result.Add(new Measurement<T>(read(db), db.DbTag));
            }
            return result;
        }
    }

    private List<Measurement<long>> ObserveTicker(Ticker ticker)
    {
        lock (_lock)
        {
            var result = new List<Measurement<long>>(_dbs.Count);
            foreach (DbTelemetry db in _dbs)
            {
                if (db.Statistics is { } stats)
                {
                    result.Add(new Measurement<long>(stats.GetTickerCount(ticker), db.DbTag));
                }
            }
            return result;
        }
    }

    private List<Measurement<long>> ObserveCompactionBytes()
    {
        lock (_lock)
        {
            var result = new List<Measurement<long>>(_dbs.Count * 2);
            foreach (DbTelemetry db in _dbs)
            {
                result.Add(new Measurement<long>(db.Counters.CompactReadBytes, db.DbTag, new KeyValuePair<string, object?>("direction", "read")));
                result.Add(new Measurement<long>(db.Counters.CompactWriteBytes, db.DbTag, new KeyValuePair<string, object?>("direction", "write")));
            }
            return result;
        }
    }

    private List<Measurement<long>> ObserveLevelBytes() => ObservePerLevel(files: false);

    private List<Measurement<long>> ObserveLevelFiles() => ObservePerLevel(files: true);

    private List<Measurement<long>> ObservePerLevel(bool files)
    {
        lock (_lock)
        {
            var result = new List<Measurement<long>>(_dbs.Count * s_levels.Length);
            Span<long> values = stackalloc long[s_levels.Length];
            foreach (DbTelemetry db in _dbs)
            {
                db.LevelSizes(values, files);
                for (int level = 0; level < values.Length; level++)
                {
                    result.Add(new Measurement<long>(values[level], db.DbTag, new KeyValuePair<string, object?>("level", s_levels[level])));
                }
            }
            return result;
        }
    }

    private static object[] BoxLevels()
    {
        var levels = new object[Versions.Version.NumLevels];
        for (int i = 0; i < levels.Length; i++)
        {
            levels[i] = i;
        }
        return levels;
    }
}
