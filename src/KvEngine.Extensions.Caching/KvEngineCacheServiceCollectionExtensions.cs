using System.Diagnostics.Metrics;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace KvEngine.Extensions.Caching;

/// <summary>
/// Registers <see cref="KvEngineCache"/> as the application's <see cref="IDistributedCache"/>
/// (which HybridCache then uses as its L2). Stateless and thread-safe.
/// </summary>
public static class KvEngineCacheServiceCollectionExtensions
{
    /// <summary>
    /// Adds a <see cref="KvEngineCache"/> singleton as the <see cref="IDistributedCache"/> (replacing
    /// any registered before, as AddStackExchangeRedisCache does), configured by
    /// <paramref name="setupAction"/>. The options are validated when the host starts; then a hosted
    /// service opens the cache's database (on a thread-pool thread: an open error, such as a path
    /// that cannot be a directory or a LOCK held by another process, fails the host's start with
    /// that exception), and flushes and closes it when the host stops. A cache used before the host
    /// has started (or without a host) opens its database in that first call, which waits for an
    /// open already running; after the host has stopped it throws <see cref="ObjectDisposedException"/>.
    /// The clock is the registered <see cref="TimeProvider"/>, or the system's. The engine's
    /// metrics (meter "KvEngine") go through the registered <see cref="IMeterFactory"/> and its
    /// log events (category "KvEngine") to the registered <see cref="ILoggerFactory"/>, when the
    /// host has them (every ASP.NET Core and generic host does).
    /// </summary>
    /// <param name="services">The service collection.</param>
    /// <param name="setupAction">Sets <see cref="KvEngineCacheOptions.Path"/> and any other option.</param>
    /// <returns><paramref name="services"/>, for chaining.</returns>
    public static IServiceCollection AddKvEngineCache(this IServiceCollection services, Action<KvEngineCacheOptions> setupAction)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(setupAction);
        AddCore(services).Configure(setupAction);
        return services;
    }

    /// <summary>
    /// Adds a <see cref="KvEngineCache"/> as <see cref="AddKvEngineCache(IServiceCollection, Action{KvEngineCacheOptions})"/>
    /// does, with its options bound from <paramref name="configuration"/> (for example
    /// <c>builder.Configuration.GetSection("KvEngineCache")</c>: every property of
    /// <see cref="KvEngineCacheOptions"/> but ConfigureDatabase, such as Path, InstanceName,
    /// SyncWrites, Compression, BlockCacheSize, WriteBufferSize, MaxBackgroundJobs), then adjusted by
    /// <paramref name="setupAction"/> when one is given.
    /// </summary>
    /// <param name="services">The service collection.</param>
    /// <param name="configuration">The configuration section holding the options.</param>
    /// <param name="setupAction">Optional further configuration, applied after binding.</param>
    /// <returns><paramref name="services"/>, for chaining.</returns>
    public static IServiceCollection AddKvEngineCache(this IServiceCollection services, IConfiguration configuration,
        Action<KvEngineCacheOptions>? setupAction = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(configuration);
        OptionsBuilder<KvEngineCacheOptions> builder = AddCore(services).Bind(configuration);
        if (setupAction != null)
        {
            builder.Configure(setupAction);
        }
        return services;
    }

    private static OptionsBuilder<KvEngineCacheOptions> AddCore(IServiceCollection services)
    {
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<KvEngineCacheOptions>, KvEngineCacheOptionsValidator>());
        services.TryAddSingleton(sp => new KvEngineCache(
            sp.GetRequiredService<IOptions<KvEngineCacheOptions>>(),
            sp.GetService<TimeProvider>() ?? TimeProvider.System,
            sp.GetService<IMeterFactory>(),
            sp.GetService<ILoggerFactory>(),
            openNow: false));
        services.AddHostedService(sp => new KvEngineCacheHostedService(sp.GetRequiredService<KvEngineCache>()));
        services.Add(ServiceDescriptor.Singleton<IDistributedCache>(sp => sp.GetRequiredService<KvEngineCache>()));
        return services.AddOptions<KvEngineCacheOptions>().ValidateOnStart();
    }
}
