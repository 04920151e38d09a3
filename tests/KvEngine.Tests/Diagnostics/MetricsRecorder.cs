using System.Diagnostics.Metrics;

namespace KvEngine.Tests.Diagnostics;

/// <summary>
/// A <see cref="MeterListener"/> on the "KvEngine" instruments that <see cref="Accept"/> lets
/// through, keeping every measurement tagged db.namespace = <see cref="DbName"/> (other tests' databases
/// publish on meters of the same name meanwhile). <see cref="Collect"/> polls the observable
/// instruments. Thread-safe.
/// </summary>
internal sealed class MetricsRecorder : IDisposable
{
    private readonly MeterListener _listener = new();
    private readonly List<(Instrument Instrument, double Value, Dictionary<string, object?> Tags)> _measurements = new();

    public MetricsRecorder(string dbName, Func<Instrument, bool> accept)
    {
        DbName = dbName;
        Accept = accept;
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Name == KvEngineDiagnostics.MeterName && Accept(instrument))
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.MeasurementsCompleted = (instrument, _) =>
        {
            lock (_measurements)
            {
                CompletedMeters.Add(instrument.Meter);
            }
        };
        _listener.SetMeasurementEventCallback<long>((i, v, tags, _) => Add(i, v, tags));
        _listener.SetMeasurementEventCallback<double>((i, v, tags, _) => Add(i, v, tags));
        _listener.Start();
    }

    public string DbName { get; }

    public Func<Instrument, bool> Accept { get; }

    /// <summary>Meters whose instruments reported MeasurementsCompleted (the meter was disposed).</summary>
    public HashSet<Meter> CompletedMeters { get; } = new();

    /// <summary>Meters that produced a measurement for <see cref="DbName"/>.</summary>
    public HashSet<Meter> SeenMeters { get; } = new();

    public void Collect() => _listener.RecordObservableInstruments();

    /// <summary>Clears what was recorded, then polls the observable instruments.</summary>
    public void CollectFresh()
    {
        lock (_measurements)
        {
            _measurements.Clear();
        }
        Collect();
    }

    /// <summary>The measurements of <paramref name="name"/> for the database, optionally with one more tag.</summary>
    public double[] Values(string name, string? tag = null, object? tagValue = null)
    {
        lock (_measurements)
        {
            return _measurements
                .Where(m => m.Instrument.Name == name && (tag == null || (m.Tags.TryGetValue(tag, out object? v) && Equals(v, tagValue))))
                .Select(m => m.Value)
                .ToArray();
        }
    }

    /// <summary>The single (latest) observed value of an observable instrument; fails when there is none.</summary>
    public double Latest(string name, string? tag = null, object? tagValue = null)
    {
        double[] values = Values(name, tag, tagValue);
        Assert.True(values.Length > 0, $"no measurement of {name} for {DbName}");
        return values[^1];
    }

    public void Dispose() => _listener.Dispose();

    private void Add(Instrument instrument, double value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        var dict = new Dictionary<string, object?>();
        foreach (KeyValuePair<string, object?> t in tags)
        {
            dict[t.Key] = t.Value;
        }
        if (!dict.TryGetValue(KvEngineDiagnostics.DbNamespaceTag, out object? db) || !Equals(db, DbName))
        {
            return;
        }
        lock (_measurements)
        {
            _measurements.Add((instrument, value, dict));
            SeenMeters.Add(instrument.Meter);
        }
    }
}
