using KvEngine.Extensions.Caching;

namespace KvEngine.CacheService;

/// <summary>
/// On a graceful shutdown, after the server has stopped and drained its requests (StoppedAsync runs
/// after every hosted service's StopAsync), flushes the KvEngineCache's memtable so the next start
/// replays no log. Does nothing when another IDistributedCache is configured. Thread-safe.
/// </summary>
internal sealed class FlushOnShutdownService(IServiceProvider services, ILogger<FlushOnShutdownService> logger) : IHostedLifecycleService
{
    public Task StartingAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StartedAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StoppingAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public async Task StoppedAsync(CancellationToken cancellationToken)
    {
        if (services.GetService<KvEngineCache>() is { } cache)
        {
            await cache.FlushAsync(cancellationToken);
            logger.LogInformation("Flushed the cache's memtable on shutdown.");
        }
    }
}
