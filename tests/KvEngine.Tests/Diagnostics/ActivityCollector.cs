using System.Collections.Concurrent;
using System.Diagnostics;

namespace KvEngine.Tests.Diagnostics;

/// <summary>
/// Listens to the "KvEngine" activity source and keeps the stopped spans whose db.namespace is
/// under <see cref="_prefix"/> (tests run in parallel; each watches its own directory). Spans
/// are stopped before the operation returns, so reading <see cref="Spans"/> needs no wait.
/// </summary>
internal sealed class ActivityCollector : IDisposable
{
    private readonly string _prefix;
    private readonly ActivityListener _listener;
    private readonly ConcurrentQueue<Activity> _spans = new();

    public ActivityCollector(string prefix)
    {
        _prefix = prefix;
        _listener = new ActivityListener
        {
            ShouldListenTo = source => source.Name == KvEngineDiagnostics.ActivitySourceName,
            Sample = (ref ActivityCreationOptions<ActivityContext> _) => ActivitySamplingResult.AllDataAndRecorded,
            ActivityStopped = a =>
            {
                if (a.GetTagItem(KvEngineDiagnostics.DbNamespaceTag) is string dir && dir.StartsWith(_prefix, StringComparison.Ordinal))
                {
                    _spans.Enqueue(a);
                }
            },
        };
        ActivitySource.AddActivityListener(_listener);
    }

    public IReadOnlyList<Activity> Spans => [.. _spans];

    public IReadOnlyList<Activity> Named(string name) => [.. _spans.Where(a => a.OperationName == name)];

    public void Dispose() => _listener.Dispose();
}
