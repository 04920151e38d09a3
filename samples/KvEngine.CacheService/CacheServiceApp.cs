using KvEngine.Extensions.Caching;
using OpenTelemetry.Metrics;

namespace KvEngine.CacheService;

/// <summary>
/// Builds the service: KvEngineCache from the "KvEngineCache" configuration section, the
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
        builder.Services.AddKvEngineCache(builder.Configuration.GetSection("KvEngineCache"));
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
            .AddMeter("KvEngine") // the engine's meter, once it has one (issue 15)
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
