using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Diagnostics.HealthChecks;

namespace KvEngine.CacheService;

/// <summary>Healthy when the cache answers a read (of a key nobody writes). Thread-safe.</summary>
internal sealed class CacheHealthCheck(IDistributedCache cache) : IHealthCheck
{
    public async Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
    {
        try
        {
            await cache.GetAsync("__health__", cancellationToken);
            return HealthCheckResult.Healthy();
        }
        catch (Exception e) when (e is KvException or IOException or ObjectDisposedException)
        {
            return HealthCheckResult.Unhealthy("The cache failed a read.", e);
        }
    }
}
