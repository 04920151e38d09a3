namespace KvEngine.CacheService;

/// <summary>The IDistributedCache behind the service ("Cache:Backend"); bound from configuration by name.</summary>
public enum CacheBackend
{
    /// <summary>KvEngineCache, embedded in the process (the default).</summary>
    KvEngine,

    /// <summary>RedisCache (Microsoft.Extensions.Caching.StackExchangeRedis) on a Redis-protocol server: Redis, Garnet, Valkey.</summary>
    Redis,
}
