using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace KvEngine.Extensions.Caching;

/// <summary>
/// Registers a plain <see cref="KvDb"/> with the host's lifetime (opened when the host starts,
/// flushed and closed when it stops), for applications that use the database directly rather
/// than as a cache. Stateless and thread-safe.
/// </summary>
public static class KvDbServiceCollectionExtensions
{
    /// <summary>
    /// Adds the database at <paramref name="path"/> as a <see cref="KvDb"/> singleton. A hosted
    /// service opens it when the host starts, on a thread-pool thread (an open error fails the
    /// host's start with that exception), and flushes and closes it when the host stops; resolved
    /// before the start, it is opened by that resolution. The options get the host's
    /// <see cref="IMeterFactory"/> and <see cref="ILoggerFactory"/>, then
    /// <paramref name="configure"/> runs. One database per service collection.
    /// </summary>
    /// <param name="services">The service collection.</param>
    /// <param name="path">The database's directory (created when missing).</param>
    /// <param name="configure">Sets further <see cref="KvOptions"/>; null: the defaults.</param>
    /// <returns><paramref name="services"/>, for chaining.</returns>
    /// <exception cref="InvalidOperationException">A database was already added.</exception>
    public static IServiceCollection AddKvDb(this IServiceCollection services, string path, Action<KvOptions>? configure)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentException.ThrowIfNullOrWhiteSpace(path);
        return Add(services, sp => new KvDbLifetime(path, () =>
        {
            var options = new KvOptions
            {
                MeterFactory = sp.GetService<IMeterFactory>(),
                LoggerFactory = sp.GetService<ILoggerFactory>(),
            };
            configure?.Invoke(options);
            return options;
        }, sp.GetService<ILoggerFactory>()));
    }

    /// <summary>
    /// Adds the database at <paramref name="path"/> with the default options, with the lifetime
    /// described at <see cref="AddKvDb(IServiceCollection, string, Action{KvOptions})"/>.
    /// </summary>
    /// <param name="services">The service collection.</param>
    /// <param name="path">The database's directory (created when missing).</param>
    /// <returns><paramref name="services"/>, for chaining.</returns>
    /// <exception cref="InvalidOperationException">A database was already added.</exception>
    public static IServiceCollection AddKvDb(this IServiceCollection services, string path) => AddKvDb(services, path, configure: null);

    /// <summary>
    /// Adds the database at <paramref name="path"/>, opened with <paramref name="options"/> as
    /// given, with the lifetime described at <see cref="AddKvDb(IServiceCollection, string, Action{KvOptions})"/>.
    /// </summary>
    /// <param name="services">The service collection.</param>
    /// <param name="path">The database's directory.</param>
    /// <param name="options">The options to open it with (not modified).</param>
    /// <returns><paramref name="services"/>, for chaining.</returns>
    /// <exception cref="InvalidOperationException">A database was already added.</exception>
    public static IServiceCollection AddKvDb(this IServiceCollection services, string path, KvOptions options)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentException.ThrowIfNullOrWhiteSpace(path);
        ArgumentNullException.ThrowIfNull(options);
        return Add(services, sp => new KvDbLifetime(path, () => options, sp.GetService<ILoggerFactory>()));
    }

    private static IServiceCollection Add(IServiceCollection services, Func<IServiceProvider, KvDbLifetime> lifetime)
    {
        foreach (ServiceDescriptor d in services)
        {
            if (d.ServiceType == typeof(KvDbLifetime))
            {
                throw new InvalidOperationException("AddKvDb was already called on this service collection: it registers one KvDb.");
            }
        }
        services.AddSingleton(lifetime);
        services.AddSingleton(sp => sp.GetRequiredService<KvDbLifetime>().Open());
        services.AddSingleton<IHostedService>(sp => sp.GetRequiredService<KvDbLifetime>());
        return services;
    }
}
