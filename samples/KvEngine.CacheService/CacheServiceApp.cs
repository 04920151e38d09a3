using KvEngine.Extensions.Caching;
using OpenTelemetry.Metrics;

namespace KvEngine.CacheService;

/// <summary>
/// Builds the service: the cache chosen by "Cache:Backend" — KvEngineCache (the default) from the
/// "KvEngineCache" configuration section, or RedisCache (AddStackExchangeRedisCache, for the load
/// comparison in docs/benchmarks.md) with "Cache:Redis:Configuration" — the
/// /cache/{key} endpoints, /health, Prometheus metrics at /metrics (ASP.NET Core's HTTP server
/// metrics and <see cref="CacheServiceMetrics"/>), and a flush of the database after the server has drained on
/// shutdown. Configuration: appsettings.json, then environment variables (KvEngineCache__Path)
/// and the command line (--KvEngineCache:Path=...), as every ASP.NET Core application.
/// Stateless and thread-safe.
/// </summary>
public static class CacheServiceApp
{
    /// <summary>Builds the application; <paramref name="configureServices"/> may replace services (tests give a fake clock).</summary>
    public static WebApplication Build(string[] args, Action<IServiceCollection>? configureServices = null)
    {
        WebApplicationBuilder builder = WebApplication.CreateBuilder(args);
        CacheBackend backend = builder.Configuration.GetValue("Cache:Backend", CacheBackend.KvEngine);
        if (backend == CacheBackend.Redis)
        {
            string redis = builder.Configuration["Cache:Redis:Configuration"]
                ?? throw new InvalidOperationException("Cache:Backend is Redis but Cache:Redis:Configuration (e.g. 127.0.0.1:6379) is not set.");
            builder.Services.AddStackExchangeRedisCache(o =>
            {
                o.Configuration = redis;
                o.InstanceName = builder.Configuration["Cache:Redis:InstanceName"];
            });
        }
        else
        {
            // Passes the host's IMeterFactory and ILoggerFactory to the engine: its "KvEngine" meter
            // (exported below) and its flush/compaction/stall/background-error log events.
            builder.Services.AddKvEngineCache(builder.Configuration.GetSection("KvEngineCache"));
        }
        builder.Services.AddOptions<CacheServiceOptions>()
            .Bind(builder.Configuration.GetSection("CacheService"))
            .ValidateDataAnnotations()
            .ValidateOnStart();
        builder.Services.AddHealthChecks().AddCheck<CacheHealthCheck>("cache");
        builder.Services.AddHostedService<FlushOnShutdownService>();
        builder.Services.AddSingleton<CacheServiceMetrics>();
        builder.Services.AddOpenTelemetry().WithMetrics(metrics => metrics
            .AddAspNetCoreInstrumentation()
            .AddMeter(CacheServiceMetrics.MeterName)
            .AddMeter(KvEngineDiagnostics.MeterName) // the engine's own instruments (KvOptions.MeterFactory)
            .AddPrometheusExporter());
        configureServices?.Invoke(builder.Services);

        WebApplication app = builder.Build();
        RouteGroupBuilder cache = app.MapGroup("/cache");
        cache.MapPut("/{key}", CacheEndpoints.PutAsync);
        cache.MapGet("/{key}", CacheEndpoints.GetAsync);
        cache.MapDelete("/{key}", CacheEndpoints.DeleteAsync);
        app.MapHealthChecks("/health");
        app.MapPrometheusScrapingEndpoint("/metrics");
        return app;
    }
}
