namespace KvEngine;

/// <summary>
/// Names under which a database publishes its telemetry: the <see cref="System.Diagnostics.Metrics.Meter"/>
/// (<see cref="MeterName"/>; OpenTelemetry's <c>AddMeter("KvEngine")</c>) and the
/// <see cref="Microsoft.Extensions.Logging.ILogger"/> category (<see cref="LoggerCategory"/>) and the
/// <see cref="System.Diagnostics.ActivitySource"/> of its trace spans (<see cref="ActivitySourceName"/>).
/// See <see cref="KvOptions.MeterFactory"/> and <see cref="KvOptions.LoggerFactory"/>.
/// </summary>
public static class KvEngineDiagnostics
{
    /// <summary>The name of the meter every database's instruments are on: "KvEngine".</summary>
    public const string MeterName = "KvEngine";

    /// <summary>The category of the engine's log events (flushes, compactions, write stalls, background errors): "KvEngine".</summary>
    public const string LoggerCategory = "KvEngine";

    /// <summary>
    /// The tag naming the database (its full directory path) on every measurement: "db.namespace",
    /// OpenTelemetry's database semantic convention (which replaced "db.name").
    /// </summary>
    public const string DbNamespaceTag = "db.namespace";

    /// <summary>
    /// The name of the <see cref="System.Diagnostics.ActivitySource"/> of the engine's trace spans:
    /// "KvEngine" (OpenTelemetry's <c>AddSource("KvEngine")</c>). Spans: <c>kvengine.open</c>,
    /// <c>kvengine.flush</c>, <c>kvengine.compaction</c>, <c>kvengine.ingest</c>,
    /// <c>kvengine.checkpoint</c> and, in KvEngine.Replication, <c>kvengine.raft.snapshot_install</c>;
    /// none per read or write. Each carries <see cref="DbNamespaceTag"/>; a failed one has an Error
    /// status and the exception as an event.
    /// </summary>
    public const string ActivitySourceName = "KvEngine";
}
