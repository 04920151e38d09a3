using KvEngine.Compaction;

namespace KvEngine.Diagnostics;

/// <summary>
/// What a database's observable instruments read from it (<see cref="DbTelemetry"/>): its
/// engine counters, memtable and block-cache usage and per-level sizes. Implemented by the
/// database; every member must be callable from a metrics-collection thread at any time between
/// the telemetry's construction and its disposal.
/// </summary>
internal interface ITelemetrySource
{
    EngineCounters Counters { get; }

    long MemTableBytes();

    long BlockCacheUsageBytes();

    /// <summary>Per level: file counts when <paramref name="files"/>, else bytes.</summary>
    void LevelSizes(Span<long> values, bool files);
}
