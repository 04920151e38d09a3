using System.Text;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Caching.Hybrid;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;

namespace KvEngine.Extensions.Caching.Tests;

/// <summary>AddKvEngineCache in a host: configuration binding, validation at start, disposal with
/// the host, and HybridCache using the cache as its L2 across a restart.</summary>
public sealed class KvEngineCacheHostingTests : IDisposable
{
    private readonly TempDirectory _dir = new();
    private readonly FakeTimeProvider _time = new(new DateTimeOffset(2030, 1, 1, 0, 0, 0, TimeSpan.Zero));

    public void Dispose() => _dir.Dispose();

    private IHost BuildHost(Action<IServiceCollection> configure)
    {
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Services.AddSingleton<TimeProvider>(_time);
        configure(builder.Services);
        return builder.Build();
    }

    [Fact]
    public async Task Options_bind_from_configuration_and_the_host_disposes_the_cache()
    {
        IConfiguration config = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["KvEngineCache:Path"] = _dir.Path,
            ["KvEngineCache:InstanceName"] = "svc:",
            ["KvEngineCache:SyncWrites"] = "true",
            ["KvEngineCache:Compression"] = "Zstd",
        }).Build();
        using (IHost host = BuildHost(s => s.AddKvEngineCache(config.GetSection("KvEngineCache"))))
        {
            await host.StartAsync();
            KvEngineCacheOptions options = host.Services.GetRequiredService<IOptions<KvEngineCacheOptions>>().Value;
            Assert.Equal(_dir.Path, options.Path);
            Assert.Equal("svc:", options.InstanceName);
            Assert.True(options.SyncWrites);
            Assert.Equal(KvCompressionType.Zstd, options.Compression);

            IDistributedCache cache = host.Services.GetRequiredService<IDistributedCache>();
            Assert.Same(host.Services.GetRequiredService<KvEngineCache>(), cache);
            await cache.SetStringAsync("k", "v");
            await host.StopAsync();
        }
        // Disposing the host closed the database: it opens again, and holds the prefixed key.
        using KvDb db = KvDb.Open(_dir.Path);
        Assert.NotNull(db.Get("svc:k"u8));
    }

    [Fact]
    public async Task The_action_overload_replaces_a_previously_registered_distributed_cache()
    {
        using IHost host = BuildHost(s =>
        {
            s.AddDistributedMemoryCache();
            s.AddKvEngineCache(o => o.Path = _dir.Path);
        });
        await host.StartAsync();
        Assert.IsType<KvEngineCache>(host.Services.GetRequiredService<IDistributedCache>());
        await host.StopAsync();
    }

    [Fact]
    public async Task Invalid_options_fail_the_host_at_start()
    {
        using IHost host = BuildHost(s => s.AddKvEngineCache(o => o.InstanceName = "no path"));
        OptionsValidationException e = await Assert.ThrowsAsync<OptionsValidationException>(() => host.StartAsync());
        Assert.Contains("Path", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task HybridCache_uses_the_cache_as_its_L2_and_the_value_survives_a_restart()
    {
        int factoryCalls = 0;
        ValueTask<string> Factory(CancellationToken _)
        {
            Interlocked.Increment(ref factoryCalls);
            return ValueTask.FromResult($"computed #{factoryCalls}");
        }

        void Configure(IServiceCollection s)
        {
            s.AddKvEngineCache(o => o.Path = _dir.Path);
            s.AddHybridCache();
        }

        using (IHost host = BuildHost(Configure))
        {
            await host.StartAsync();
            HybridCache hybrid = host.Services.GetRequiredService<HybridCache>();
            // SetAsync returns once L2 is written (GetOrCreateAsync writes L2 in the background
            // after answering, which a test could not wait for).
            await hybrid.SetAsync("product:42", "stored before the restart");
            Assert.Equal("stored before the restart", await hybrid.GetOrCreateAsync("product:42", Factory));
            Assert.Equal(0, factoryCalls);
            // The L2 entry is HybridCache's framed payload, stored by KvEngineCache.
            byte[]? l2 = await host.Services.GetRequiredService<IDistributedCache>().GetAsync("product:42");
            Assert.NotNull(l2);
            Assert.Equal(new byte[] { 3, 1 }, l2[..2]);
            Assert.Contains("stored before the restart", Encoding.UTF8.GetString(l2), StringComparison.Ordinal);
            await host.StopAsync();
        }

        // A new process would start from here: a new host, a new (empty) L1, the same directory.
        using (IHost host = BuildHost(Configure))
        {
            await host.StartAsync();
            HybridCache hybrid = host.Services.GetRequiredService<HybridCache>();
            Assert.Equal("stored before the restart", await hybrid.GetOrCreateAsync("product:42", Factory));
            Assert.Equal(0, factoryCalls); // served from L2: the factory did not run

            // HybridCache's default expiration (5 minutes) is written to L2 as an absolute one.
            _time.Advance(TimeSpan.FromMinutes(5));
            Assert.Null(await host.Services.GetRequiredService<IDistributedCache>().GetAsync("product:42"));

            await hybrid.SetAsync("product:43", "second");
            Assert.NotNull(await host.Services.GetRequiredService<IDistributedCache>().GetAsync("product:43"));
            await hybrid.RemoveAsync("product:43"); // removes from L1 and L2
            Assert.Null(await host.Services.GetRequiredService<IDistributedCache>().GetAsync("product:43"));
            await host.StopAsync();
        }
    }

    [Fact]
    public async Task The_host_opens_the_database_at_start_and_flushes_and_closes_it_at_stop()
    {
        using IHost host = BuildHost(s => s.AddKvEngineCache(o => o.Path = _dir.Path));
        await host.StartAsync();
        // Nothing has resolved or called the cache: the host opened its database (its LOCK is held).
        KvException held = Assert.ThrowsAny<KvException>(() => KvDb.Open(_dir.Path));
        Assert.Contains("LOCK", held.Message, StringComparison.Ordinal);
        KvEngineCache cache = host.Services.GetRequiredService<KvEngineCache>();
        await cache.SetAsync("k", Encoding.UTF8.GetBytes("v"), new DistributedCacheEntryOptions());
        await host.StopAsync();
        Assert.Throws<ObjectDisposedException>(() => cache.Get("k"));
        Assert.NotEmpty(Directory.GetFiles(_dir.Path, "*.sst")); // flushed at stop
        using KvDb db = KvDb.Open(_dir.Path); // and closed, before the host is disposed
        Assert.NotNull(db.Get("k"u8));
    }

    [Fact]
    public async Task A_path_that_cannot_be_opened_fails_the_host_start_with_the_reason()
    {
        string file = Path.Combine(_dir.Path, "a-file");
        await File.WriteAllTextAsync(file, "not a database directory");
        using IHost host = BuildHost(s => s.AddKvEngineCache(o => o.Path = file));
        Exception e = await Assert.ThrowsAnyAsync<Exception>(() => host.StartAsync());
        Assert.True(e is KvException or IOException, e.ToString());
        Assert.Contains(file, e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_cache_used_before_the_host_starts_opens_its_database_in_that_call()
    {
        using IHost host = BuildHost(s => s.AddKvEngineCache(o => o.Path = _dir.Path));
        IDistributedCache cache = host.Services.GetRequiredService<IDistributedCache>();
        await cache.SetStringAsync("early", "v");
        await host.StartAsync(); // the open is already done: start does not open it twice
        Assert.Equal("v", await cache.GetStringAsync("early"));
        await host.StopAsync();
    }

    [Fact]
    public async Task Every_engine_setting_binds_from_configuration_and_reaches_the_database()
    {
        IConfiguration config = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["KvEngineCache:Path"] = _dir.Path,
            ["KvEngineCache:DisableWal"] = "true",
            ["KvEngineCache:BlockCacheSize"] = "33554432",
            ["KvEngineCache:CompressedSecondaryCacheSize"] = "1048576",
            ["KvEngineCache:WriteBufferSize"] = "8388608",
            ["KvEngineCache:MaxWriteBufferNumber"] = "4",
            ["KvEngineCache:MaxBackgroundJobs"] = "3",
            ["KvEngineCache:BloomBitsPerKey"] = "12.5",
            ["KvEngineCache:TargetFileSizeBase"] = "16777216",
            ["KvEngineCache:MaxTotalWalSize"] = "67108864",
            ["KvEngineCache:WalRecoveryMode"] = "AbsoluteConsistency",
            ["KvEngineCache:DelayedWriteRate"] = "1048576",
            ["KvEngineCache:MaxOpenFiles"] = "500",
            ["KvEngineCache:EnableStatistics"] = "false",
        }).Build();
        using IHost host = BuildHost(s => s.AddKvEngineCache(config.GetSection("KvEngineCache")));
        await host.StartAsync();
        KvEngineCache cache = host.Services.GetRequiredService<KvEngineCache>();
        KvOptions o = cache.DatabaseOptions!;
        Assert.Equal(32L << 20, cache.Database.GetProperty("rocksdb.block-cache-capacity") is { } capacity ? long.Parse(capacity, System.Globalization.CultureInfo.InvariantCulture) : 0);
        Assert.Equal(8L << 20, o.WriteBufferSize);
        Assert.Equal(4, o.MaxWriteBufferNumber);
        Assert.Equal(3, o.MaxBackgroundJobs);
        Assert.Equal(12.5, o.BloomBitsPerKey);
        Assert.Equal(16L << 20, o.TargetFileSizeBase);
        Assert.Equal(64L << 20, o.MaxTotalWalSize);
        Assert.Equal(WalRecoveryMode.AbsoluteConsistency, o.WalRecoveryMode);
        Assert.Equal(1L << 20, o.DelayedWriteRate);
        Assert.Equal(500, o.MaxOpenFiles);
        Assert.Null(o.Statistics);
        Assert.True(host.Services.GetRequiredService<IOptions<KvEngineCacheOptions>>().Value.DisableWal);
        await cache.SetAsync("k", [1], new DistributedCacheEntryOptions());
        await host.StopAsync();
        using KvDb db = KvDb.Open(_dir.Path);
        Assert.NotNull(db.Get("k"u8)); // the stop flushed what the WAL did not hold
    }

    [Fact]
    public async Task Out_of_range_engine_settings_fail_the_host_start_with_every_problem()
    {
        IConfiguration config = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["KvEngineCache:Path"] = _dir.Path,
            ["KvEngineCache:SyncWrites"] = "true",
            ["KvEngineCache:DisableWal"] = "true",
            ["KvEngineCache:WriteBufferSize"] = "100",
            ["KvEngineCache:MaxBackgroundJobs"] = "0",
            ["KvEngineCache:MaxWriteBufferNumber"] = "1",
            ["KvEngineCache:BloomBitsPerKey"] = "101",
            ["KvEngineCache:MaxOpenFiles"] = "0",
            ["KvEngineCache:BlockCacheSize"] = "-1",
        }).Build();
        using IHost host = BuildHost(s => s.AddKvEngineCache(config.GetSection("KvEngineCache")));
        OptionsValidationException e = await Assert.ThrowsAsync<OptionsValidationException>(() => host.StartAsync());
        foreach (string name in new[] { "DisableWal", "WriteBufferSize", "MaxBackgroundJobs", "MaxWriteBufferNumber", "BloomBitsPerKey", "MaxOpenFiles", "BlockCacheSize" })
        {
            Assert.Contains(name, e.Message, StringComparison.Ordinal);
        }
        Assert.Equal(7, e.Failures.Count());
    }
}
