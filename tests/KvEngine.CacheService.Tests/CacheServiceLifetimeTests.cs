using System.Buffers;
using System.Net;
using KvEngine.Extensions.Caching;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.DependencyInjection;

namespace KvEngine.CacheService.Tests;

/// <summary>
/// The sample's lifetime as an operator sees it: a cache path that cannot be opened fails the
/// start with the reason; /health turns Unhealthy when a background error stops the engine's
/// writes (a compaction filter that throws, installed through the options) and Healthy after
/// Resume. Nothing sleeps: the test waits for the filter's signal, then reads /health until it
/// changes, with a deadline.
/// </summary>
public sealed class CacheServiceLifetimeTests : IDisposable
{
    private readonly string _dir = Path.Combine(Path.GetTempPath(), "kvcache-lifetime-" + Guid.NewGuid().ToString("N"));

    public CacheServiceLifetimeTests() => Directory.CreateDirectory(_dir);

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    private sealed class FailingFilter : KvCompactionFilter
    {
        public volatile bool Fail = true;
        public readonly ManualResetEventSlim Failed = new();

        public override string Name => "test.failing";

        public override KvCompactionFilterDecision FilterValue(int level, ReadOnlySpan<byte> key, ReadOnlySpan<byte> existingValue, IBufferWriter<byte> newValue)
        {
            if (Fail)
            {
                Failed.Set();
                throw new IOException("injected compaction failure");
            }
            return KvCompactionFilterDecision.Keep;
        }
    }

    [Fact]
    public async Task A_cache_path_that_cannot_be_opened_fails_the_start_with_the_reason()
    {
        string file = Path.Combine(_dir, "a-file");
        await File.WriteAllTextAsync(file, "x");
        await using WebApplication app = CacheServiceApp.Build(["--urls", "http://127.0.0.1:0", "--KvEngineCache:Path", file]);
        Exception e = await Assert.ThrowsAnyAsync<Exception>(() => app.StartAsync());
        Assert.True(e is KvException or IOException, e.ToString());
        Assert.Contains(file, e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Health_is_Unhealthy_after_a_background_error_and_Healthy_after_Resume()
    {
        var filter = new FailingFilter();
        await using WebApplication app = CacheServiceApp.Build(
            ["--urls", "http://127.0.0.1:0", "--KvEngineCache:Path", _dir],
            services => services.PostConfigure<KvEngineCacheOptions>(o => o.ConfigureDatabase = kv =>
            {
                kv.CompactionFilter = filter;
                kv.Level0FileNumCompactionTrigger = 2;
            }));
        await app.StartAsync();
        string address = app.Services.GetRequiredService<IServer>().Features.GetRequiredFeature<IServerAddressesFeature>().Addresses.Single();
        using var http = new HttpClient { BaseAddress = new Uri(address) };
        Assert.Equal("Healthy", await http.GetStringAsync("/health"));

        KvEngineCache cache = app.Services.GetRequiredService<KvEngineCache>();
        for (int i = 0; i < 2; i++)
        {
            (await http.PutAsync("/cache/k" + i, Body([1, 2, 3]))).EnsureSuccessStatusCode();
            await cache.FlushAsync(); // two level-0 files: a compaction starts, and its filter throws
        }
        Assert.True(filter.Failed.Wait(TimeSpan.FromMinutes(1)), "no compaction ran");
        HttpResponseMessage sick = await WaitForHealth(http, HttpStatusCode.ServiceUnavailable);
        Assert.Equal("Unhealthy", await sick.Content.ReadAsStringAsync());
        Assert.Equal(HttpStatusCode.OK, (await http.GetAsync("/cache/k0")).StatusCode); // reads go on

        filter.Fail = false;
        cache.Database.Resume();
        HttpResponseMessage well = await WaitForHealth(http, HttpStatusCode.OK);
        Assert.Equal("Healthy", await well.Content.ReadAsStringAsync());
        (await http.PutAsync("/cache/after", Body([4]))).EnsureSuccessStatusCode();
        await app.StopAsync();
    }

    private static ByteArrayContent Body(byte[] bytes)
    {
        var content = new ByteArrayContent(bytes);
        content.Headers.ContentType = new System.Net.Http.Headers.MediaTypeHeaderValue("application/octet-stream");
        return content;
    }

    /// <summary>/health until it answers <paramref name="status"/> (the error is recorded just after the filter throws).</summary>
    private static async Task<HttpResponseMessage> WaitForHealth(HttpClient http, HttpStatusCode status)
    {
        DateTime deadline = DateTime.UtcNow.AddMinutes(1);
        while (true)
        {
            HttpResponseMessage response = await http.GetAsync("/health");
            if (response.StatusCode == status || DateTime.UtcNow > deadline)
            {
                Assert.Equal(status, response.StatusCode);
                return response;
            }
            response.Dispose();
            await Task.Delay(20); // polling for a state change, not a timed assertion
        }
    }
}
