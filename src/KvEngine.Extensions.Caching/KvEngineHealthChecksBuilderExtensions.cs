using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;

namespace KvEngine.Extensions.Caching;

/// <summary>Registers the KvEngine health check. Stateless and thread-safe.</summary>
public static class KvEngineHealthChecksBuilderExtensions
{
    /// <summary>
    /// Adds a health check of the KvEngine databases registered by AddKvEngineCache and AddKvDb:
    /// <paramref name="failureStatus"/> (Unhealthy by default) when a database is not open or
    /// refuses writes after a background error (until <see cref="KvDb.Resume"/> or an automatic
    /// resume), Degraded while writes are slowed or stopped by too many level-0 files or wait for a
    /// flush, Healthy otherwise. The check reads engine properties only (no write).
    /// </summary>
    /// <param name="builder">The health checks builder (<c>services.AddHealthChecks()</c>).</param>
    /// <param name="name">The check's name; "kvengine" by default.</param>
    /// <param name="failureStatus">The status reported for a failure; null: Unhealthy.</param>
    /// <param name="tags">Tags to filter checks by (for example "ready").</param>
    /// <returns><paramref name="builder"/>, for chaining.</returns>
    public static IHealthChecksBuilder AddKvEngineHealthCheck(this IHealthChecksBuilder builder, string name = "kvengine",
        HealthStatus? failureStatus = null, IEnumerable<string>? tags = null)
    {
        ArgumentNullException.ThrowIfNull(builder);
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        return builder.Add(new HealthCheckRegistration(name, sp => new KvEngineHealthCheck(sp), failureStatus, tags));
    }
}
