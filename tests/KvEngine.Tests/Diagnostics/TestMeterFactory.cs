using System.Diagnostics.Metrics;

namespace KvEngine.Tests.Diagnostics;

/// <summary>
/// An <see cref="IMeterFactory"/> as a host's: every meter it creates has the factory as its
/// scope (so a listener can take this factory's instruments only) and is disposed with it.
/// Thread-safe.
/// </summary>
internal sealed class TestMeterFactory : IMeterFactory
{
    private readonly List<Meter> _meters = new();

    public IReadOnlyList<Meter> Meters
    {
        get
        {
            lock (_meters)
            {
                return _meters.ToArray();
            }
        }
    }

    public Meter Create(MeterOptions options)
    {
        var meter = new Meter(new MeterOptions(options.Name) { Version = options.Version, Tags = options.Tags, Scope = this });
        lock (_meters)
        {
            _meters.Add(meter);
        }
        return meter;
    }

    public void Dispose()
    {
        foreach (Meter m in Meters)
        {
            m.Dispose();
        }
    }
}
