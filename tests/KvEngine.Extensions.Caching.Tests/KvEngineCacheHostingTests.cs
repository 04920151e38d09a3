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
}
