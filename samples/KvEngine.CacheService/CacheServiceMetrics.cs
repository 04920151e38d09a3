using System.Diagnostics.Metrics;

namespace KvEngine.CacheService;

/// <summary>
/// The service's own instruments, on a meter named <see cref="MeterName"/> created through
/// <see cref="IMeterFactory"/>: requests by operation and outcome, and the sizes of values stored
/// and served. Exported with ASP.NET Core's HTTP metrics at /metrics. Thread-safe.
/// </summary>
internal sealed class CacheServiceMetrics
{
    public const string MeterName = "KvEngine.CacheService";

    private readonly Counter<long> _requests;
    private readonly Histogram<long> _valueBytes;

    public CacheServiceMetrics(IMeterFactory meterFactory)
    {
        Meter meter = meterFactory.Create(MeterName);
        _requests = meter.CreateCounter<long>("kvcache.requests", "{request}",
            "Cache requests by operation (get, put, delete) and outcome (hit, miss, stored, rejected, removed).");
        _valueBytes = meter.CreateHistogram<long>("kvcache.value.size", "By",
            "Sizes of the values stored (put) and served (get hit).");
    }

    public void Request(string operation, string outcome) =>
        _requests.Add(1, new KeyValuePair<string, object?>("operation", operation), new KeyValuePair<string, object?>("outcome", outcome));

    public void Value(string operation, long bytes) =>
        _valueBytes.Record(bytes, new KeyValuePair<string, object?>("operation", operation));
}
