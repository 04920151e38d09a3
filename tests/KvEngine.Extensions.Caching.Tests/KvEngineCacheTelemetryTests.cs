using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace KvEngine.Extensions.Caching.Tests;

/// <summary>
/// AddKvEngineCache hands the host's IMeterFactory and ILoggerFactory to the engine: its
/// "KvEngine" instruments are on the host factory's meter (and count the cache's reads and writes,
/// the cache keeping statistics), and its flush events reach the host's loggers.
/// </summary>
public sealed class KvEngineCacheTelemetryTests : IDisposable
{
    private readonly TempDirectory _dir = new();

    public void Dispose() => _dir.Dispose();

    [Fact]
    public async Task The_engine_publishes_through_the_hosts_meter_factory_and_logger_factory()
    {
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Services.AddKvEngineCache(o => o.Path = _dir.Path);
        var logs = new CapturingLoggerProvider();
        builder.Logging.AddProvider(logs);
        builder.Logging.SetMinimumLevel(LogLevel.Information);
        using IHost host = builder.Build();
        await host.StartAsync();

        IMeterFactory factory = host.Services.GetRequiredService<IMeterFactory>();
        string dbName = Path.GetFullPath(_dir.Path);
        var values = new Dictionary<string, long>();
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == KvEngineDiagnostics.MeterName && ReferenceEquals(instrument.Meter.Scope, factory))
            {
                l.EnableMeasurementEvents(instrument);
            }
        };
        listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            foreach (KeyValuePair<string, object?> t in tags)
            {
                if (t.Key == "db.namespace" && Equals(t.Value, dbName))
                {
                    values[instrument.Name] = value;
                }
            }
        });
        listener.Start();

        KvEngineCache cache = host.Services.GetRequiredService<KvEngineCache>();
        await cache.SetAsync("a", new byte[100], new Microsoft.Extensions.Caching.Distributed.DistributedCacheEntryOptions());
        await cache.SetAsync("b", new byte[100], new Microsoft.Extensions.Caching.Distributed.DistributedCacheEntryOptions());
        Assert.NotNull(await cache.GetAsync("a"));
        await cache.FlushAsync();
        listener.RecordObservableInstruments();

        Assert.Equal(2, values["kvengine.writes"]);
        Assert.Equal(1, values["kvengine.reads"]);
        Assert.Equal(1, values["kvengine.flushes"]);
        Assert.Contains(logs.Entries, e => e.Category == KvEngineDiagnostics.LoggerCategory && e.EventId.Name == "FlushFinished");
        await host.StopAsync();
    }

    private sealed class CapturingLoggerProvider : ILoggerProvider
    {
        private readonly List<(string Category, EventId EventId)> _entries = new();

        public IReadOnlyList<(string Category, EventId EventId)> Entries
        {
            get
            {
                lock (_entries)
                {
                    return _entries.ToArray();
                }
            }
        }

        public ILogger CreateLogger(string categoryName) => new Logger(this, categoryName);

        public void Dispose()
        {
        }

        private sealed class Logger(CapturingLoggerProvider owner, string category) : ILogger
        {
            public IDisposable? BeginScope<TState>(TState state) where TState : notnull => null;

            public bool IsEnabled(LogLevel logLevel) => true;

            public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
            {
                lock (owner._entries)
                {
                    owner._entries.Add((category, eventId));
                }
            }
        }
    }
}
