using System.Buffers;
using System.Diagnostics.Metrics;
using System.Runtime.CompilerServices;
using System.Text;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace KvEngine.Extensions.Caching;

/// <summary>
/// An <see cref="IDistributedCache"/> (and <see cref="IBufferDistributedCache"/>) kept in an
/// embedded KvEngine database: entries survive a restart of the process, reads are local.
/// <para>
/// Expiration follows <see cref="DistributedCacheEntryOptions"/> as MemoryDistributedCache
/// applies it: with both <see cref="DistributedCacheEntryOptions.AbsoluteExpiration"/> and
/// <see cref="DistributedCacheEntryOptions.AbsoluteExpirationRelativeToNow"/> the earlier wins; a
/// sliding expiration is reset by every read and by <see cref="Refresh"/>, never past the absolute
/// one; an entry is expired from the instant its expiry is reached, and a set whose expiry is
/// already reached removes the key. Time comes from the <see cref="TimeProvider"/> given. Each
/// value is stored after a small header holding its expiry (<see cref="CacheEntryFormat"/>); a read
/// of a sliding entry writes only a 40-byte renewal record next to it, never the value again. An
/// expired entry is never returned and is deleted when a read finds it, and compaction drops the
/// expired entries nobody reads (<see cref="ExpiredCacheEntryCompactionFilter"/>, installed on the
/// database unless <see cref="KvEngineCacheOptions.ConfigureDatabase"/> sets another filter).
/// </para>
/// <para>
/// Caches with the same <see cref="KvEngineCacheOptions.Path"/> in one process share one open
/// database (reference-counted: the last one disposed closes it), each under its own
/// <see cref="KvEngineCacheOptions.InstanceName"/> prefix; the database is opened with the options
/// of the cache that opens it first. The constructors open it; the cache registered by
/// <see cref="KvEngineCacheServiceCollectionExtensions"/> opens it when the host starts instead.
/// </para>
/// <para>
/// Thread-safety: every member may be called concurrently. Writes of one key (sets, removes and
/// the renewal write of a sliding read) are serialized by a striped lock, so a renewal never moves
/// an expiry backwards and an expired entry is deleted only if no set replaced it. The async
/// methods return a cancelled task for a token cancelled before their write is queued (they never
/// throw it at the call). <see cref="GetAsync"/> and <see cref="TryGetAsync"/> read through
/// <see cref="KvDb.TryGetAsync(ReadOnlyMemory{byte}, IBufferWriter{byte}, ReadOptions?, CancellationToken)"/>:
/// complete synchronously when the entry's blocks are cached, else release the thread while the
/// I/O engine reads them; the synchronous members read synchronously.
/// </para>
/// </summary>
public sealed partial class KvEngineCache : IBufferDistributedCache, IDisposable, IAsyncDisposable
{
    private const int StackKeyBytes = 256;

    [ThreadStatic]
    private static PooledBufferWriter? t_buffer;

    [ThreadStatic]
    private static PooledBufferWriter? t_renewal;

    [ThreadStatic]
    private static WriteBatch? t_batch;

    private readonly SharedCacheDatabase _shared;
    private readonly Func<(KvOptions Options, KvBlockCache? OwnedBlockCache)> _databaseOptions;
    private readonly TimeProvider _time;
    private readonly WriteOptions _writeOptions;
    private readonly byte[] _prefix;
    private readonly ILogger? _logger;
    private int _disposed;

    /// <summary>
    /// The database under the cache (opened now if neither the host nor an earlier call opened it),
    /// shared with the other caches of the process on the same path: for its properties and
    /// statistics, <see cref="KvDb.Resume"/> after a background error, or a manual compaction. The
    /// cache owns it: do not dispose it; keys written into it directly are not cache entries.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The cache was disposed.</exception>
    /// <exception cref="KvException">The database could not be opened.</exception>
    public KvDb Database => Db();

    /// <summary>The full path of the database (shared by the caches of the process configured with it).</summary>
    internal string FullPath => _shared.FullPath;

    /// <summary>Opens (or creates) the cache's database at <see cref="KvEngineCacheOptions.Path"/>, with the system clock.</summary>
    /// <param name="optionsAccessor">The cache's options.</param>
    /// <exception cref="OptionsValidationException">The options are not valid.</exception>
    public KvEngineCache(IOptions<KvEngineCacheOptions> optionsAccessor)
        : this(optionsAccessor, TimeProvider.System)
    {
    }

    /// <summary>Opens (or creates) the cache's database at <see cref="KvEngineCacheOptions.Path"/>.</summary>
    /// <param name="optionsAccessor">The cache's options.</param>
    /// <param name="timeProvider">The clock expirations are measured against.</param>
    /// <exception cref="OptionsValidationException">The options are not valid.</exception>
    public KvEngineCache(IOptions<KvEngineCacheOptions> optionsAccessor, TimeProvider timeProvider)
        : this(optionsAccessor, timeProvider, meterFactory: null, loggerFactory: null)
    {
    }

    /// <summary>
    /// Opens (or creates) the cache's database at <see cref="KvEngineCacheOptions.Path"/>, publishing
    /// the engine's metrics and logs through the host's factories: the database gets
    /// <see cref="KvOptions.MeterFactory"/>, <see cref="KvOptions.LoggerFactory"/> and a
    /// <see cref="KvStatistics"/> (so the meter counts reads, writes and block-cache hits), before
    /// <see cref="KvEngineCacheOptions.ConfigureDatabase"/> runs (which may change any of them).
    /// When another cache of the process already has the path open, this one shares its database.
    /// </summary>
    /// <param name="optionsAccessor">The cache's options.</param>
    /// <param name="timeProvider">The clock expirations are measured against.</param>
    /// <param name="meterFactory">Creates the engine's "KvEngine" meter; null: the database creates and owns one.</param>
    /// <param name="loggerFactory">Receives the engine's flush, compaction, stall and background-error events; null: none.</param>
    /// <exception cref="OptionsValidationException">The options are not valid.</exception>
    /// <exception cref="KvException">The database could not be opened.</exception>
    public KvEngineCache(IOptions<KvEngineCacheOptions> optionsAccessor, TimeProvider timeProvider, IMeterFactory? meterFactory,
        ILoggerFactory? loggerFactory)
        : this(optionsAccessor, timeProvider, meterFactory, loggerFactory, openNow: true)
    {
    }

    /// <summary>
    /// Creates the cache; with <paramref name="openNow"/> false its database is opened by
    /// <see cref="OpenAsync"/> (the hosted service, at host start) or by the first call, whichever
    /// comes first.
    /// </summary>
    internal KvEngineCache(IOptions<KvEngineCacheOptions> optionsAccessor, TimeProvider timeProvider, IMeterFactory? meterFactory,
        ILoggerFactory? loggerFactory, bool openNow)
    {
        ArgumentNullException.ThrowIfNull(optionsAccessor);
        ArgumentNullException.ThrowIfNull(timeProvider);
        KvEngineCacheOptions options = optionsAccessor.Value;
        ArgumentNullException.ThrowIfNull(options, nameof(optionsAccessor));
        ValidateOptionsResult result = new KvEngineCacheOptionsValidator().Validate(Options.DefaultName, options);
        if (result.Failed)
        {
            throw new OptionsValidationException(Options.DefaultName, typeof(KvEngineCacheOptions), result.Failures);
        }
        _time = timeProvider;
        _logger = loggerFactory?.CreateLogger(KvEngineDiagnostics.LoggerCategory);
        _writeOptions = new WriteOptions { Sync = options.SyncWrites, DisableWal = options.DisableWal };
        _prefix = string.IsNullOrEmpty(options.InstanceName) ? [] : Encoding.UTF8.GetBytes(options.InstanceName);
        _databaseOptions = () => options.CreateDatabaseOptions(timeProvider, meterFactory, loggerFactory);
        _shared = SharedCacheDatabase.Acquire(options.Path!);
        if (openNow)
        {
            try
            {
                _shared.Open(_databaseOptions);
            }
            catch
            {
                _shared.Release();
                throw;
            }
        }
    }

    /// <summary>Opens the database on a thread-pool thread unless it is open (the hosted service's start).</summary>
    internal Task OpenAsync(CancellationToken cancellationToken) =>
        _shared.Database != null ? Task.CompletedTask : Task.Run(() => { _ = Db(); }, cancellationToken);

    /// <summary>The database once it is open; null before (the health check reports that).</summary>
    internal KvDb? OpenedDatabase => _shared.Database;

    /// <summary>The options the database was opened with; null before it is open.</summary>
    internal KvOptions? DatabaseOptions => _shared.Options;

    /// <summary>
    /// The host is stopping: flushes the memtable (so the next start replays no log) and releases
    /// the cache's share of the database; a failed flush is logged, the close happens anyway.
    /// </summary>
    internal async Task StopAsync(CancellationToken cancellationToken)
    {
        if (Volatile.Read(ref _disposed) != 0)
        {
            return;
        }
        if (_shared.Database is { } db)
        {
            try
            {
                await db.FlushAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e) when (e is KvException or OperationCanceledException or ObjectDisposedException)
            {
                _logger?.LogWarning(e, "KvEngineCache could not flush {Path} at shutdown; the WAL keeps every acknowledged write.", _shared.FullPath);
            }
        }
        await DisposeAsync().ConfigureAwait(false);
    }

    /// <inheritdoc />
    public byte[]? Get(string key)
    {
        ArgumentNullException.ThrowIfNull(key);
        PooledBufferWriter buffer = RentThreadBuffer();
        return TryReadLive(key, buffer) ? buffer.WrittenSpan[CacheEntryFormat.HeaderSize..].ToArray() : null;
    }

    /// <inheritdoc />
    public Task<byte[]?> GetAsync(string key, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(key);
        if (token.IsCancellationRequested)
        {
            return Task.FromCanceled<byte[]?>(token);
        }
        return GetCoreAsync(key, token).AsTask();
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<byte[]?> GetCoreAsync(string key, CancellationToken token)
    {
        PooledBufferWriter buffer = TakeThreadBuffer();
        try
        {
            return await TryReadLiveAsync(key, buffer, token).ConfigureAwait(false) ? buffer.WrittenSpan[CacheEntryFormat.HeaderSize..].ToArray() : null;
        }
        finally
        {
            GiveBackThreadBuffer(buffer);
        }
    }

    /// <inheritdoc />
    public bool TryGet(string key, IBufferWriter<byte> destination)
    {
        ArgumentNullException.ThrowIfNull(key);
        ArgumentNullException.ThrowIfNull(destination);
        PooledBufferWriter buffer = RentThreadBuffer();
        if (!TryReadLive(key, buffer))
        {
            return false;
        }
        destination.Write(buffer.WrittenSpan[CacheEntryFormat.HeaderSize..]);
        return true;
    }

    /// <inheritdoc />
    public ValueTask<bool> TryGetAsync(string key, IBufferWriter<byte> destination, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(key);
        ArgumentNullException.ThrowIfNull(destination);
        if (token.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<bool>(token);
        }
        return TryGetCoreAsync(key, destination, token);
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<bool> TryGetCoreAsync(string key, IBufferWriter<byte> destination, CancellationToken token)
    {
        PooledBufferWriter buffer = TakeThreadBuffer();
        try
        {
            if (!await TryReadLiveAsync(key, buffer, token).ConfigureAwait(false))
            {
                return false;
            }
            destination.Write(buffer.WrittenSpan[CacheEntryFormat.HeaderSize..]);
            return true;
        }
        finally
        {
            GiveBackThreadBuffer(buffer);
        }
    }

    /// <inheritdoc />
    public void Refresh(string key)
    {
        ArgumentNullException.ThrowIfNull(key);
        TryReadLive(key, RentThreadBuffer());
    }

    /// <inheritdoc />
    public Task RefreshAsync(string key, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(key);
        if (token.IsCancellationRequested)
        {
            return Task.FromCanceled(token);
        }
        try
        {
            Refresh(key);
            return Task.CompletedTask;
        }
        catch (Exception e)
        {
            return Task.FromException(e);
        }
    }

    /// <inheritdoc />
    public void Remove(string key)
    {
        ArgumentNullException.ThrowIfNull(key);
        ThrowIfDisposed();
        KvDb db = Db();
        byte[]? rented = null;
        Span<byte> renewalKey = EncodeKeys(key, stackalloc byte[StackKeyBytes], ref rented);
        SemaphoreSlim stripe = Stripe(renewalKey);
        stripe.Wait();
        try
        {
            DeleteEntry(db, renewalKey);
        }
        finally
        {
            stripe.Release();
            Return(rented);
        }
    }

    /// <inheritdoc />
    public async Task RemoveAsync(string key, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(key);
        token.ThrowIfCancellationRequested();
        ThrowIfDisposed();
        KvDb db = Db();
        byte[] k = EncodeKeysArray(key, out int length);
        try
        {
            SemaphoreSlim stripe = Stripe(k.AsSpan(0, length));
            await stripe.WaitAsync(token).ConfigureAwait(false);
            try
            {
                using var batch = new WriteBatch();
                batch.Delete(k.AsSpan(1, length - 1));
                batch.Delete(k.AsSpan(0, length));
                await db.WriteAsync(batch, _writeOptions, token).ConfigureAwait(false);
            }
            finally
            {
                stripe.Release();
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(k);
        }
    }

    /// <inheritdoc />
    public void Set(string key, byte[] value, DistributedCacheEntryOptions options)
    {
        ArgumentNullException.ThrowIfNull(value);
        Set(key, new ReadOnlySequence<byte>(value), options);
    }

    /// <inheritdoc />
#pragma warning disable RS0026 // both overloads and their optional token are IDistributedCache's and IBufferDistributedCache's
    public Task SetAsync(string key, byte[] value, DistributedCacheEntryOptions options, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(value);
        return SetAsync(key, new ReadOnlySequence<byte>(value), options, token).AsTask();
    }
#pragma warning restore RS0026

    /// <inheritdoc />
    public void Set(string key, ReadOnlySequence<byte> value, DistributedCacheEntryOptions options)
    {
        ArgumentNullException.ThrowIfNull(key);
        ArgumentNullException.ThrowIfNull(options);
        ThrowIfDisposed();
        KvDb db = Db();
        CacheEntryHeader header = NewHeader(options, _time.GetUtcNow().UtcTicks, out bool alreadyExpired);
        byte[]? rented = null;
        Span<byte> renewalKey = EncodeKeys(key, stackalloc byte[StackKeyBytes], ref rented);
        ReadOnlySpan<byte> k = renewalKey[1..];
        PooledBufferWriter entry = RentThreadBuffer();
        try
        {
            if (!alreadyExpired)
            {
                Compose(entry, header, value);
            }
            SemaphoreSlim stripe = Stripe(renewalKey);
            stripe.Wait();
            try
            {
                if (alreadyExpired)
                {
                    DeleteEntry(db, renewalKey);
                }
                else
                {
                    // A renewal left by an earlier Set of the key carries that Set's stamp: it never applies to this one.
                    db.Put(k, entry.WrittenSpan, _writeOptions);
                }
            }
            finally
            {
                stripe.Release();
            }
        }
        finally
        {
            entry.Reset();
            Return(rented);
        }
    }

    /// <inheritdoc />
#pragma warning disable RS0026 // both overloads and their optional token are IDistributedCache's and IBufferDistributedCache's
    public async ValueTask SetAsync(string key, ReadOnlySequence<byte> value, DistributedCacheEntryOptions options, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(key);
        ArgumentNullException.ThrowIfNull(options);
        token.ThrowIfCancellationRequested();
        ThrowIfDisposed();
        KvDb db = Db();
        CacheEntryHeader header = NewHeader(options, _time.GetUtcNow().UtcTicks, out bool alreadyExpired);
        byte[] k = EncodeKeysArray(key, out int keyLength);
        PooledBufferWriter? entry = null;
        try
        {
            if (!alreadyExpired)
            {
                entry = new PooledBufferWriter(CacheEntryFormat.HeaderSize + (int)Math.Min(value.Length, Array.MaxLength - CacheEntryFormat.HeaderSize));
                Compose(entry, header, value);
            }
            SemaphoreSlim stripe = Stripe(k.AsSpan(0, keyLength));
            await stripe.WaitAsync(token).ConfigureAwait(false);
            try
            {
                if (entry == null)
                {
                    using var batch = new WriteBatch();
                    batch.Delete(k.AsSpan(1, keyLength - 1));
                    batch.Delete(k.AsSpan(0, keyLength));
                    await db.WriteAsync(batch, _writeOptions, token).ConfigureAwait(false);
                }
                else
                {
                    await db.PutAsync(k.AsMemory(1, keyLength - 1), entry.WrittenMemory, _writeOptions, token).ConfigureAwait(false);
                }
            }
            finally
            {
                stripe.Release();
            }
        }
        finally
        {
            entry?.Release();
            ArrayPool<byte>.Shared.Return(k);
        }
    }
#pragma warning restore RS0026

    /// <summary>
    /// Writes the database's memtable to a table file and waits until it is recorded (KvEngine's
    /// Flush), so that the next open replays no log: for a graceful shutdown.
    /// </summary>
    /// <param name="cancellationToken">Observed before the flush starts.</param>
    public ValueTask FlushAsync(CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken);
        }
        ThrowIfDisposed();
        return Db().FlushAsync(cancellationToken);
    }

    /// <summary>
    /// Releases the cache's share of its database; the last cache of the process on the path closes
    /// it (its WAL holds every acknowledged write). Idempotent; never throws.
    /// </summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            _shared.Release();
        }
    }

    /// <summary>As <see cref="Dispose"/>, closing the database without blocking on its background work. Idempotent; never throws.</summary>
    public ValueTask DisposeAsync() =>
        Interlocked.Exchange(ref _disposed, 1) == 0 ? _shared.ReleaseAsync() : ValueTask.CompletedTask;

    /// <summary>The open database; opened here when neither the host nor an earlier call opened it.</summary>
    private KvDb Db()
    {
        ThrowIfDisposed();
        return _shared.Database ?? _shared.Open(_databaseOptions);
    }

    /// <summary>
    /// Reads <paramref name="key"/>'s stored entry into <paramref name="buffer"/> (reset first) and
    /// returns true when it is live, after moving its sliding expiration (a renewal record);
    /// deletes it and returns false when it has expired.
    /// </summary>
    private bool TryReadLive(string key, PooledBufferWriter buffer)
    {
        KvDb db = Db();
        byte[]? rented = null;
        Span<byte> renewalKey = EncodeKeys(key, stackalloc byte[StackKeyBytes], ref rented);
        ReadOnlySpan<byte> k = renewalKey[1..];
        try
        {
            buffer.Reset();
            if (!db.TryGet(k, buffer))
            {
                return false;
            }
            return IsLiveAfterRead(db, renewalKey, buffer);
        }
        finally
        {
            Return(rented);
        }
    }

    /// <summary>
    /// <see cref="TryReadLive"/> through the database's asynchronous read: a lookup whose blocks
    /// are not cached releases the thread while the engine reads them. The renewal or deletion of
    /// an entry with a sliding or passed expiry stays synchronous (rare, and under the key's lock).
    /// </summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<bool> TryReadLiveAsync(string key, PooledBufferWriter buffer, CancellationToken token)
    {
        KvDb db = Db();
        byte[] k = EncodeKeysArray(key, out int length);
        try
        {
            buffer.Reset();
            if (!await db.TryGetAsync(k.AsMemory(1, length - 1), buffer, null, token).ConfigureAwait(false))
            {
                return false;
            }
            return IsLiveAfterRead(db, k.AsSpan(0, length), buffer);
        }
        finally
        {
            Return(k);
        }
    }

    /// <summary>The entry read into <paramref name="buffer"/> is live: true (renewing a sliding expiry), else false (deleting it when expired).</summary>
    private bool IsLiveAfterRead(KvDb db, Span<byte> renewalKey, PooledBufferWriter buffer)
    {
        ReadOnlySpan<byte> k = renewalKey[1..];
        CacheEntryHeader header = CacheEntryHeader.Read(buffer.WrittenSpan);
        long now = _time.GetUtcNow().UtcTicks;
        if (!header.HasSliding && !header.IsExpired(now))
        {
            return true; // live, and no sliding expiry to move: nothing to write
        }

        // Renew or delete under the key's lock: renewals never move an expiry backwards, and a
        // set racing with this read is not undone by it.
        SemaphoreSlim stripe = Stripe(renewalKey);
        stripe.Wait();
        try
        {
            long expiresAt = header.HasSliding ? CurrentExpiry(db, renewalKey, header) : header.ExpiresAt;
            now = _time.GetUtcNow().UtcTicks;
            if (now >= expiresAt)
            {
                // Expired: delete the key unless a set has replaced this generation meanwhile.
                buffer.Reset();
                if (db.TryGet(k, buffer) && CacheEntryHeader.Read(buffer.WrittenSpan) == header)
                {
                    DeleteEntry(db, renewalKey);
                }
                return false;
            }
            long renewed = header.Touched(now).ExpiresAt;
            if (renewed > expiresAt)
            {
                Span<byte> record = stackalloc byte[CacheRenewal.Size];
                CacheRenewal.For(header, renewed).Write(record);
                db.Put(renewalKey, record, _writeOptions);
            }
            return true;
        }
        finally
        {
            stripe.Release();
        }
    }

    private static PooledBufferWriter RentThreadBuffer() => t_buffer ??= new PooledBufferWriter();

    /// <summary>The thread's buffer, taken out of its slot for a call that may resume on another thread (a new one if it is out); give it back with <see cref="GiveBackThreadBuffer"/>.</summary>
    private static PooledBufferWriter TakeThreadBuffer()
    {
        PooledBufferWriter? buffer = t_buffer;
        t_buffer = null;
        return buffer ?? new PooledBufferWriter();
    }

    /// <summary>Puts <paramref name="buffer"/> in the current thread's slot when it is empty (else drops it).</summary>
    private static void GiveBackThreadBuffer(PooledBufferWriter buffer) => t_buffer ??= buffer;

    private void ThrowIfDisposed() => ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
}
