using System.Buffers;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;

namespace KvEngine.Extensions.Caching.Tests;

/// <summary>
/// AddKvEngineHealthCheck: Unhealthy while a background error stops writes (injected through a
/// compaction filter that throws, which the engine turns into its background error) and Healthy
/// again after Resume; Degraded while level-0 files slow writes down (a compaction held inside its
/// filter keeps them there). Synchronized by events, never by sleeping.
/// </summary>
public sealed class KvEngineHealthCheckTests : IDisposable
{
    private readonly TempDirectory _dir = new();

    public void Dispose() => _dir.Dispose();

    private sealed class ControlledFilter : KvCompactionFilter
    {
        public volatile bool Throw;
        public volatile bool Block;
        public readonly ManualResetEventSlim Entered = new();
        public readonly ManualResetEventSlim Release = new();

        public override string Name => "test.controlled";

        public override KvCompactionFilterDecision FilterValue(int level, ReadOnlySpan<byte> key, ReadOnlySpan<byte> existingValue, IBufferWriter<byte> newValue)
        {
            if (Throw)
            {
                throw new IOException("injected compaction failure");
            }
            if (Block)
            {
                Entered.Set();
                Release.Wait();
            }
            return KvCompactionFilterDecision.Keep;
        }
    }

    private static IHost BuildHost(Action<IServiceCollection> configure)
    {
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        configure(builder.Services);
        builder.Services.AddHealthChecks().AddKvEngineHealthCheck();
        return builder.Build();
    }

    private static async Task<HealthReportEntry> Check(IHost host) =>
        (await host.Services.GetRequiredService<HealthCheckService>().CheckHealthAsync()).Entries["kvengine"];

    [Fact]
    public async Task A_background_error_is_Unhealthy_until_Resume()
    {
        var filter = new ControlledFilter();
        using IHost host = BuildHost(s => s.AddKvDb(_dir.Path, o => o.CompactionFilter = filter));
        await host.StartAsync();
        Assert.Equal(HealthStatus.Healthy, (await Check(host)).Status);
        KvDb db = host.Services.GetRequiredService<KvDb>();
        db.Put("a"u8, "1"u8);
        db.Flush();
        db.Put("b"u8, "2"u8);
        db.Flush();
        filter.Throw = true;
        Assert.ThrowsAny<KvException>(() => db.CompactRange(null, null));
        Assert.ThrowsAny<KvException>(() => db.Put("c"u8, "3"u8)); // writes are stopped

        HealthReportEntry sick = await Check(host);
        Assert.Equal(HealthStatus.Unhealthy, sick.Status);
        Assert.Contains("injected compaction failure", sick.Description, StringComparison.Ordinal);

        filter.Throw = false;
        db.Resume();
        Assert.Equal(HealthStatus.Healthy, (await Check(host)).Status);
        db.Put("c"u8, "3"u8);
        await host.StopAsync();
    }

    [Fact]
    public async Task Level0_files_at_the_slowdown_trigger_are_Degraded()
    {
        var filter = new ControlledFilter { Block = true };
        using IHost host = BuildHost(s => s.AddKvDb(_dir.Path, o =>
        {
            o.CompactionFilter = filter;
            o.Level0FileNumCompactionTrigger = 2;
            o.Level0SlowdownWritesTrigger = 2;
        }));
        await host.StartAsync();
        KvDb db = host.Services.GetRequiredService<KvDb>();
        db.Put("a"u8, "1"u8);
        db.Flush();
        Assert.Equal(HealthStatus.Healthy, (await Check(host)).Status);
        db.Put("b"u8, "2"u8);
        db.Flush(); // two level-0 files: a compaction starts and is held in the filter
        Assert.True(filter.Entered.Wait(TimeSpan.FromMinutes(1)), "the compaction never reached the filter");
        HealthReportEntry slowed = await Check(host);
        Assert.Equal(HealthStatus.Degraded, slowed.Status);
        Assert.Contains("level-0", slowed.Description, StringComparison.Ordinal);

        filter.Block = false;
        filter.Release.Set();
        db.CompactRange(null, null); // runs after the held compaction: level 0 ends empty
        Assert.Equal("0", db.GetProperty("rocksdb.num-files-at-level0"));
        Assert.Equal(HealthStatus.Healthy, (await Check(host)).Status);
        await host.StopAsync();
    }

    [Fact]
    public async Task The_cache_database_is_checked_and_is_Unhealthy_before_it_opens()
    {
        using IHost host = BuildHost(s => s.AddKvEngineCache(o => o.Path = _dir.Path));
        HealthReportEntry before = await Check(host);
        Assert.Equal(HealthStatus.Unhealthy, before.Status);
        Assert.Contains("not open", before.Description, StringComparison.Ordinal);
        await host.StartAsync();
        Assert.Equal(HealthStatus.Healthy, (await Check(host)).Status);
        await host.StopAsync();
        Assert.Equal(HealthStatus.Unhealthy, (await Check(host)).Status);
    }
}
