using KvEngine.CacheService.Cluster;
using KvEngine.Extensions.Caching;
using Microsoft.Extensions.DependencyInjection.Extensions;
using OpenTelemetry.Metrics;
using OpenTelemetry.Trace;

namespace KvEngine.CacheService;

/// <summary>
/// Builds the service: the cache chosen by "Cache:Backend" — KvEngineCache (the default) from the
/// "KvEngineCache" configuration section, or RedisCache (AddStackExchangeRedisCache, for the load
/// comparison in docs/benchmarks.md) with "Cache:Redis:Configuration" — the
/// /cache/{key} endpoints, /health, Prometheus metrics at /metrics (ASP.NET Core's HTTP server
/// metrics and <see cref="CacheServiceMetrics"/>). With KvEngineCache the package's hosted service
/// opens the database before the server starts (a bad path fails the start with the reason) and
/// flushes and closes it after the server has drained on shutdown, and /health is the package's
/// AddKvEngineHealthCheck (Unhealthy while a background error stops writes, Degraded while writes
/// stall). Configuration: appsettings.json, then environment variables (KvEngineCache__Path)
/// and the command line (--KvEngineCache:Path=...), as every ASP.NET Core application.
/// With <c>--cluster</c> the cache is replicated with Raft instead (Cluster/ClusterEndpoints.cs,
/// the "Cluster" section): same /cache API, writes through the leader, and /cluster.
/// Stateless and thread-safe.
/// </summary>
public static class CacheServiceApp
{
    /// <summary>The argument that starts the service as a member of a Raft cluster (section "Cluster").</summary>
    public const string ClusterFlag = "--cluster";

    /// <summary>Builds the application; <paramref name="configureServices"/> may replace services (tests give a fake clock).</summary>
    public static WebApplication Build(string[] args, Action<IServiceCollection>? configureServices = null)
    {
        // "--cluster" is a bare flag (the configuration's command-line provider wants key=value).
        bool clusterMode = args.Contains(ClusterFlag, StringComparer.Ordinal);
        WebApplicationBuilder builder = WebApplication.CreateBuilder(args.Where(a => a != ClusterFlag).ToArray());
        CacheBackend backend = builder.Configuration.GetValue("Cache:Backend", CacheBackend.KvEngine);
        if (clusterMode)
        {
            // The cache replicated with Raft: each node's KvEngine database is the state machine.
            builder.Services.AddOptions<ClusterOptions>().Bind(builder.Configuration.GetSection("Cluster"));
            builder.Services.TryAddSingleton(TimeProvider.System);
            builder.Services.AddSingleton<ClusterNode>();
            builder.Services.AddHostedService(sp => sp.GetRequiredService<ClusterNode>());
        }
        else if (backend == CacheBackend.Redis)
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
        if (clusterMode)
        {
            builder.Services.AddHealthChecks().AddCheck<ClusterHealthCheck>("cluster");
        }
        else if (backend == CacheBackend.KvEngine)
        {
            builder.Services.AddHealthChecks().AddKvEngineHealthCheck("cache");
        }
        else
        {
            builder.Services.AddHealthChecks().AddCheck<CacheHealthCheck>("cache");
        }
        builder.Services.AddSingleton<CacheServiceMetrics>();
        builder.Services.AddOpenTelemetry().WithMetrics(metrics => metrics
            .AddAspNetCoreInstrumentation()
            .AddMeter(CacheServiceMetrics.MeterName)
            .AddMeter(KvEngineDiagnostics.MeterName) // the engine's own instruments (KvOptions.MeterFactory)
            .AddPrometheusExporter())
            .WithTracing(tracing => tracing
                .AddAspNetCoreInstrumentation()
                .AddSource(KvEngineDiagnostics.ActivitySourceName)); // open, flush, compaction, ingestion, checkpoint, Raft snapshot install spans
        configureServices?.Invoke(builder.Services);

        WebApplication app = builder.Build();
        RouteGroupBuilder cache = app.MapGroup("/cache");
        if (clusterMode)
        {
            cache.MapPut("/{key}", ClusterEndpoints.PutAsync);
            cache.MapGet("/{key}", ClusterEndpoints.GetAsync);
            cache.MapDelete("/{key}", ClusterEndpoints.DeleteAsync);
            app.MapGet("/cluster", ClusterEndpoints.Status);
        }
        else
        {
            cache.MapPut("/{key}", CacheEndpoints.PutAsync);
            cache.MapGet("/{key}", CacheEndpoints.GetAsync);
            cache.MapDelete("/{key}", CacheEndpoints.DeleteAsync);
        }
        app.MapHealthChecks("/health");
        app.MapPrometheusScrapingEndpoint("/metrics");
        return app;
    }
}
