using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace KvEngine.Extensions.Caching;

/// <summary>
/// The <see cref="KvDb"/> registered by AddKvDb, with the host's lifetime: opened when the host
/// starts, before any hosted service's StartAsync (on a thread-pool thread; an open error fails
/// the host's start with it), or by its first resolution before that; flushed and closed once every
/// hosted service has stopped (after the web server has drained its requests). Disposed with the
/// container, it closes the database if the host was never stopped.
/// <para>
/// Thread-safety: <see cref="Open"/> may be called concurrently (one open runs; the others wait
/// for it, under the open lock); start and stop are called by the host, once each.
/// </para>
/// </summary>
internal sealed class KvDbLifetime : IHostedLifecycleService, IDisposable
{
    private readonly object _openLock = new();
    private readonly string _path;
    private readonly Func<KvOptions> _createOptions;
    private readonly ILogger? _logger;
    private volatile KvDb? _db;
    private bool _stopped; // guarded by _openLock

    public KvDbLifetime(string path, Func<KvOptions> createOptions, ILoggerFactory? loggerFactory)
    {
        _path = path;
        _createOptions = createOptions;
        _logger = loggerFactory?.CreateLogger(KvEngineDiagnostics.LoggerCategory);
    }

    /// <summary>The database once it is open; null before.</summary>
    public KvDb? Opened => _db;

    /// <summary>The options the database was opened with; null before it is open.</summary>
    public KvOptions? Options { get; private set; }

    /// <summary>The database, opened now unless it is open.</summary>
    /// <exception cref="ObjectDisposedException">The host has stopped.</exception>
    /// <exception cref="KvException">The database could not be opened.</exception>
    public KvDb Open()
    {
        if (_db is { } db)
        {
            return db;
        }
        lock (_openLock)
        {
            ObjectDisposedException.ThrowIf(_stopped, typeof(KvDb));
            if (_db == null)
            {
                KvOptions options = _createOptions();
                _db = KvDb.Open(_path, options);
                Options = options;
            }
            return _db;
        }
    }

    public Task StartingAsync(CancellationToken cancellationToken) =>
        _db != null ? Task.CompletedTask : Task.Run(() => { _ = Open(); }, cancellationToken);

    public Task StartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StartedAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StoppingAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public async Task StoppedAsync(CancellationToken cancellationToken)
    {
        KvDb? db;
        lock (_openLock)
        {
            _stopped = true;
            db = _db;
        }
        if (db == null)
        {
            return;
        }
        try
        {
            await db.FlushAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (e is KvException or OperationCanceledException or ObjectDisposedException)
        {
            _logger?.LogWarning(e, "KvDb could not flush {Path} at shutdown; the WAL keeps every acknowledged write.", _path);
        }
        await db.DisposeAsync().ConfigureAwait(false);
    }

    /// <summary>Closes the database if the host did not (a container disposed without a stop). Never throws.</summary>
    public void Dispose()
    {
        KvDb? db;
        lock (_openLock)
        {
            _stopped = true;
            db = _db;
        }
        db?.Dispose();
    }
}
