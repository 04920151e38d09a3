using System.Globalization;
using System.Net;
using System.Net.Http.Headers;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;

namespace KvEngine.CacheService.Tests;

/// <summary>
/// The sample service as a user runs it: Kestrel listening on a loopback port (chosen by the OS),
/// spoken to over HTTP by an HttpClient. Time is a FakeTimeProvider so TTLs are tested without
/// waiting. One server per test, in a fresh directory; the tests of this class run one at a time
/// (xUnit runs a class's tests sequentially), which the metric counts rely on: OpenTelemetry
/// listens to every meter of a name in the process.
/// </summary>
public sealed class CacheServiceHttpTests : IAsyncLifetime
{
    private readonly string _dir = Path.Combine(Path.GetTempPath(), "kvcache-service-" + Guid.NewGuid().ToString("N"));
    private readonly FakeTimeProvider _time = new(new DateTimeOffset(2030, 1, 1, 0, 0, 0, TimeSpan.Zero));
    private WebApplication? _app;
    private HttpClient? _http;

    private HttpClient Http => _http ?? throw new InvalidOperationException("Not started.");

    public async Task InitializeAsync() => await StartAsync();

    public async Task DisposeAsync()
    {
        await StopAsync();
        if (Directory.Exists(_dir))
        {
            Directory.Delete(_dir, recursive: true);
        }
    }

    private async Task StartAsync(int maxValueBytes = 1 << 20)
    {
        _app = CacheServiceApp.Build(
            [
                "--urls", "http://127.0.0.1:0",
                "--KvEngineCache:Path", _dir,
                "--CacheService:MaxValueBytes", maxValueBytes.ToString(System.Globalization.CultureInfo.InvariantCulture),
            ],
            services => services.AddSingleton<TimeProvider>(_time));
        await _app.StartAsync();
        string address = _app.Services.GetRequiredService<IServer>().Features.GetRequiredFeature<IServerAddressesFeature>().Addresses.Single();
        Assert.StartsWith("http://127.0.0.1:", address, StringComparison.Ordinal);
        _http = new HttpClient { BaseAddress = new Uri(address) };
    }

    private async Task StopAsync()
    {
        _http?.Dispose();
        _http = null;
        if (_app != null)
        {
            await _app.StopAsync();
            await _app.DisposeAsync();
            _app = null;
        }
    }

    private static ByteArrayContent Body(byte[] bytes)
    {
        var content = new ByteArrayContent(bytes);
        content.Headers.ContentType = new MediaTypeHeaderValue("application/octet-stream");
        return content;
    }

    [Fact]
    public async Task Put_get_delete_round_trip_any_bytes()
    {
        byte[] value = new byte[70_000];
        new Random(42).NextBytes(value);
        value[0] = 0;
        value[^1] = 0xFF;

        HttpResponseMessage put = await Http.PutAsync("/cache/user%3A42", Body(value));
        Assert.Equal(HttpStatusCode.NoContent, put.StatusCode);

        HttpResponseMessage get = await Http.GetAsync("/cache/user%3A42");
        Assert.Equal(HttpStatusCode.OK, get.StatusCode);
        Assert.Equal("application/octet-stream", get.Content.Headers.ContentType?.MediaType);
        Assert.Equal(value, await get.Content.ReadAsByteArrayAsync());

        Assert.Equal(HttpStatusCode.NoContent, (await Http.PutAsync("/cache/empty", Body([]))).StatusCode);
        HttpResponseMessage empty = await Http.GetAsync("/cache/empty");
        Assert.Equal(HttpStatusCode.OK, empty.StatusCode);
        Assert.Empty(await empty.Content.ReadAsByteArrayAsync());

        Assert.Equal(HttpStatusCode.NoContent, (await Http.DeleteAsync("/cache/user%3A42")).StatusCode);
        Assert.Equal(HttpStatusCode.NotFound, (await Http.GetAsync("/cache/user%3A42")).StatusCode);
        Assert.Equal(HttpStatusCode.NotFound, (await Http.GetAsync("/cache/never-set")).StatusCode);
        Assert.Equal(HttpStatusCode.NoContent, (await Http.DeleteAsync("/cache/never-set")).StatusCode);
    }

    [Fact]
    public async Task A_ttl_in_the_query_or_the_header_expires_the_value()
    {
        Assert.Equal(HttpStatusCode.NoContent, (await Http.PutAsync("/cache/q?ttl=60", Body("a"u8.ToArray()))).StatusCode);
        var request = new HttpRequestMessage(HttpMethod.Put, "/cache/h") { Content = Body("b"u8.ToArray()) };
        request.Headers.Add("X-Cache-TTL", "30");
        Assert.Equal(HttpStatusCode.NoContent, (await Http.SendAsync(request)).StatusCode);
        Assert.Equal(HttpStatusCode.NoContent, (await Http.PutAsync("/cache/forever", Body("c"u8.ToArray()))).StatusCode);

        _time.Advance(TimeSpan.FromSeconds(30));
        Assert.Equal(HttpStatusCode.OK, (await Http.GetAsync("/cache/q")).StatusCode);
        Assert.Equal(HttpStatusCode.NotFound, (await Http.GetAsync("/cache/h")).StatusCode);
        _time.Advance(TimeSpan.FromSeconds(30));
        Assert.Equal(HttpStatusCode.NotFound, (await Http.GetAsync("/cache/q")).StatusCode);
        Assert.Equal(HttpStatusCode.OK, (await Http.GetAsync("/cache/forever")).StatusCode);
    }

    [Theory]
    [InlineData("abc")]
    [InlineData("0")]
    [InlineData("-5")]
    [InlineData("1.5")]
    [InlineData("")]
    public async Task A_bad_ttl_is_rejected_with_400_and_stores_nothing(string ttl)
    {
        HttpResponseMessage put = await Http.PutAsync($"/cache/k?ttl={Uri.EscapeDataString(ttl)}", Body("v"u8.ToArray()));
        Assert.Equal(HttpStatusCode.BadRequest, put.StatusCode);
        Assert.Equal(HttpStatusCode.NotFound, (await Http.GetAsync("/cache/k")).StatusCode);
    }

    [Fact]
    public async Task A_value_over_the_configured_limit_gets_413()
    {
        await StopAsync();
        await StartAsync(maxValueBytes: 1000);
        Assert.Equal(HttpStatusCode.NoContent, (await Http.PutAsync("/cache/fits", Body(new byte[1000]))).StatusCode);
        Assert.Equal(HttpStatusCode.RequestEntityTooLarge, (await Http.PutAsync("/cache/big", Body(new byte[1001]))).StatusCode);
        Assert.Equal(HttpStatusCode.NotFound, (await Http.GetAsync("/cache/big")).StatusCode);
    }

    [Fact]
    public async Task Health_answers_200()
    {
        HttpResponseMessage health = await Http.GetAsync("/health");
        Assert.Equal(HttpStatusCode.OK, health.StatusCode);
        Assert.Equal("Healthy", await health.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task Metrics_are_served_in_Prometheus_format_and_count_hits_misses_and_stores()
    {
        Assert.Equal(HttpStatusCode.NoContent, (await Http.PutAsync("/cache/m", Body(new byte[1024]))).StatusCode);
        Assert.Equal(HttpStatusCode.OK, (await Http.GetAsync("/cache/m")).StatusCode);
        Assert.Equal(HttpStatusCode.OK, (await Http.GetAsync("/cache/m")).StatusCode);
        Assert.Equal(HttpStatusCode.NotFound, (await Http.GetAsync("/cache/absent")).StatusCode);

        HttpResponseMessage metrics = await Http.GetAsync("/metrics");
        Assert.Equal(HttpStatusCode.OK, metrics.StatusCode);
        string text = await metrics.Content.ReadAsStringAsync();
        string[] lines = text.Split('\n');
        Assert.Contains(lines, l => l.StartsWith("kvcache_requests_total{", StringComparison.Ordinal)
            && l.Contains("operation=\"get\"", StringComparison.Ordinal) && l.Contains("outcome=\"hit\"", StringComparison.Ordinal)
            && l.Split(' ')[1] == "2");
        Assert.Contains(lines, l => l.StartsWith("kvcache_requests_total{", StringComparison.Ordinal)
            && l.Contains("outcome=\"miss\"", StringComparison.Ordinal) && l.Split(' ')[1] == "1");
        Assert.Contains(lines, l => l.StartsWith("kvcache_requests_total{", StringComparison.Ordinal)
            && l.Contains("outcome=\"stored\"", StringComparison.Ordinal) && l.Split(' ')[1] == "1");
        Assert.Contains(lines, l => l.StartsWith("kvcache_value_size_bytes_sum{", StringComparison.Ordinal)
            && l.Contains("operation=\"get\"", StringComparison.Ordinal) && l.Split(' ')[1] == "2048");
        Assert.Contains(lines, l => l.StartsWith("http_server_request_duration_seconds_count{", StringComparison.Ordinal));
        // The engine's own meter ("KvEngine", through the host's IMeterFactory), tagged with the database.
        Assert.Contains(lines, l => l.StartsWith("kvengine_writes_total{", StringComparison.Ordinal)
            && l.Contains("db_namespace=", StringComparison.Ordinal) && long.Parse(l.Split(' ')[1], CultureInfo.InvariantCulture) >= 1);
        Assert.Contains(lines, l => l.StartsWith("kvengine_memtable_size_bytes{", StringComparison.Ordinal));
        Assert.Contains(lines, l => l.StartsWith("kvengine_level_size_bytes{", StringComparison.Ordinal) && l.Contains("level=\"6\"", StringComparison.Ordinal));
    }

    [Fact]
    public async Task A_graceful_shutdown_flushes_and_the_values_are_there_after_a_restart()
    {
        Assert.Equal(HttpStatusCode.NoContent, (await Http.PutAsync("/cache/kept", Body("survives"u8.ToArray()))).StatusCode);
        Assert.Empty(Directory.GetFiles(_dir, "*.sst")); // still in the memtable (and the WAL)
        await StopAsync();
        Assert.NotEmpty(Directory.GetFiles(_dir, "*.sst")); // flushed on shutdown
        await StartAsync();
        HttpResponseMessage get = await Http.GetAsync("/cache/kept");
        Assert.Equal(HttpStatusCode.OK, get.StatusCode);
        Assert.Equal("survives"u8.ToArray(), await get.Content.ReadAsByteArrayAsync());
    }
}
