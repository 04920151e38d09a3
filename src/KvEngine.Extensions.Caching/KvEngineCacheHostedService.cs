using Microsoft.Extensions.Hosting;

namespace KvEngine.Extensions.Caching;

/// <summary>
/// Gives the registered <see cref="KvEngineCache"/> the host's lifetime: opens its database when
/// the host starts, before any hosted service's StartAsync (so before the web server accepts
/// requests), on a thread-pool thread (an open error fails the host's start with it); flushes and
/// closes it once every hosted service has stopped (after the web server has drained its
/// requests). Registered once by AddKvEngineCache. Thread-safety: the host calls it once per phase.
/// </summary>
internal sealed class KvEngineCacheHostedService(KvEngineCache cache) : IHostedLifecycleService
{
    public Task StartingAsync(CancellationToken cancellationToken) => cache.OpenAsync(cancellationToken);

    public Task StartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StartedAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StoppingAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StoppedAsync(CancellationToken cancellationToken) => cache.StopAsync(cancellationToken);
}
