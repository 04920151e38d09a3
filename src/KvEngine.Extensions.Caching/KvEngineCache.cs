using System.Buffers;
using System.Diagnostics.Metrics;
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
/// value is stored after a small header holding its expiry (<see cref="CacheEntryFormat"/>); an
/// expired entry is never returned and is deleted when a read finds it, and compaction drops the
/// expired entries nobody reads (<see cref="ExpiredCacheEntryCompactionFilter"/>, installed on the
/// database unless <see cref="KvEngineCacheOptions.ConfigureDatabase"/> sets another filter).
/// </para>
/// <para>
/// Thread-safety: every member may be called concurrently. Writes of one key (sets, removes and
/// the header rewrite of a sliding refresh) are serialized by a striped lock, so a refresh never
/// brings back an older value. The async methods observe cancellation until their write is
/// queued; reads are synchronous disk reads, as in KvEngine.
/// </para>
/// </summary>
public sealed class KvEngineCache : IBufferDistributedCache, IDisposable, IAsyncDisposable
{
    private const int StripeCount = 64;
    private const int StackKeyBytes = 256;

    [ThreadStatic]
    private static PooledBufferWriter? t_buffer;

    private readonly KvDb _db;
    private readonly TimeProvider _time;
    private readonly WriteOptions _writeOptions;
    private readonly byte[] _prefix;
    private readonly SemaphoreSlim[] _stripes;
    private int _disposed;

    /// <summary>The underlying database (tests inspect what compaction left in it).</summary>
    internal KvDb Database => _db;

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
    /// the engine's metrics and logs through the host's factories (what
    /// <see cref="KvEngineCacheServiceCollectionExtensions.AddKvEngineCache(Microsoft.Extensions.DependencyInjection.IServiceCollection, Action{KvEngineCacheOptions})"/>
    /// passes): the database gets <see cref="KvOptions.MeterFactory"/>, <see cref="KvOptions.LoggerFactory"/>
    /// and a <see cref="KvStatistics"/> (so the meter counts reads, writes and block-cache hits),
    /// before <see cref="KvEngineCacheOptions.ConfigureDatabase"/> runs (which may change any of them).
    /// </summary>
    /// <param name="optionsAccessor">The cache's options.</param>
    /// <param name="timeProvider">The clock expirations are measured against.</param>
    /// <param name="meterFactory">Creates the engine's "KvEngine" meter; null: the database creates and owns one.</param>
    /// <param name="loggerFactory">Receives the engine's flush, compaction, stall and background-error events; null: none.</param>
    /// <exception cref="OptionsValidationException">The options are not valid.</exception>
    public KvEngineCache(IOptions<KvEngineCacheOptions> optionsAccessor, TimeProvider timeProvider, IMeterFactory? meterFactory,
        ILoggerFactory? loggerFactory)
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
        _writeOptions = new WriteOptions { Sync = options.SyncWrites };
        _prefix = string.IsNullOrEmpty(options.InstanceName) ? [] : Encoding.UTF8.GetBytes(options.InstanceName);
        _stripes = new SemaphoreSlim[StripeCount];
        for (int i = 0; i < _stripes.Length; i++)
        {
            _stripes[i] = new SemaphoreSlim(1, 1);
        }
        // Compaction drops expired entries; ConfigureDatabase may replace the filter (then they stay until read).
        var kvOptions = new KvOptions
        {
            Compression = options.Compression,
            CompactionFilter = new ExpiredCacheEntryCompactionFilter(timeProvider),
            Statistics = new KvStatistics(),
            MeterFactory = meterFactory,
            LoggerFactory = loggerFactory,
        };
        options.ConfigureDatabase?.Invoke(kvOptions);
        _db = KvDb.Open(options.Path!, kvOptions);
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
        token.ThrowIfCancellationRequested();
        return Task.FromResult(Get(key));
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
        token.ThrowIfCancellationRequested();
        return new ValueTask<bool>(TryGet(key, destination));
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
        token.ThrowIfCancellationRequested();
        Refresh(key);
        return Task.CompletedTask;
    }

    /// <inheritdoc />
    public void Remove(string key)
    {
        ArgumentNullException.ThrowIfNull(key);
        ThrowIfDisposed();
        byte[]? rented = null;
        Span<byte> k = EncodeKey(key, stackalloc byte[StackKeyBytes], ref rented);
        SemaphoreSlim stripe = Stripe(k);
        stripe.Wait();
        try
        {
            _db.Delete(k, _writeOptions);
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
        byte[] k = EncodeKeyArray(key, out int length);
        try
        {
            SemaphoreSlim stripe = Stripe(k.AsSpan(0, length));
            await stripe.WaitAsync(token).ConfigureAwait(false);
            try
            {
                await _db.DeleteAsync(k.AsMemory(0, length), _writeOptions, token).ConfigureAwait(false);
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
        CacheEntryHeader header = NewHeader(options, _time.GetUtcNow().UtcTicks, out bool alreadyExpired);
        byte[]? rented = null;
        Span<byte> k = EncodeKey(key, stackalloc byte[StackKeyBytes], ref rented);
        PooledBufferWriter entry = RentThreadBuffer();
        try
        {
            if (!alreadyExpired)
            {
                Compose(entry, header, value);
            }
            SemaphoreSlim stripe = Stripe(k);
            stripe.Wait();
            try
            {
                if (alreadyExpired)
                {
                    _db.Delete(k, _writeOptions);
                }
                else
                {
                    _db.Put(k, entry.WrittenSpan, _writeOptions);
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
        CacheEntryHeader header = NewHeader(options, _time.GetUtcNow().UtcTicks, out bool alreadyExpired);
        byte[] k = EncodeKeyArray(key, out int keyLength);
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
                    await _db.DeleteAsync(k.AsMemory(0, keyLength), _writeOptions, token).ConfigureAwait(false);
                }
                else
                {
                    await _db.PutAsync(k.AsMemory(0, keyLength), entry.WrittenMemory, _writeOptions, token).ConfigureAwait(false);
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
        cancellationToken.ThrowIfCancellationRequested();
        ThrowIfDisposed();
        return _db.FlushAsync(cancellationToken);
    }

    /// <summary>Closes the database (its WAL holds every acknowledged write). Idempotent; never throws.</summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            _db.Dispose();
        }
    }

    /// <summary>Closes the database without blocking on its background work. Idempotent; never throws.</summary>
    public ValueTask DisposeAsync() =>
        Interlocked.Exchange(ref _disposed, 1) == 0 ? _db.DisposeAsync() : ValueTask.CompletedTask;

    /// <summary>
    /// Reads <paramref name="key"/>'s stored entry into <paramref name="buffer"/> (reset first) and
    /// returns true when it is live, after resetting its sliding expiration; deletes it and returns
    /// false when it has expired.
    /// </summary>
    private bool TryReadLive(string key, PooledBufferWriter buffer)
    {
        ThrowIfDisposed();
        byte[]? rented = null;
        Span<byte> k = EncodeKey(key, stackalloc byte[StackKeyBytes], ref rented);
        try
        {
            buffer.Reset();
            if (!_db.TryGet(k, buffer))
            {
                return false;
            }
            CacheEntryHeader header = CacheEntryHeader.Read(buffer.WrittenSpan);
            long now = _time.GetUtcNow().UtcTicks;
            if (!header.IsExpired(now) && header.Touched(now) == header)
            {
                return true; // live, and no sliding expiry to move: nothing to write
            }

            // Delete or rewrite under the key's lock, from a fresh read: a set racing with this
            // read must not be undone by it.
            SemaphoreSlim stripe = Stripe(k);
            stripe.Wait();
            try
            {
                buffer.Reset();
                if (!_db.TryGet(k, buffer))
                {
                    return false;
                }
                header = CacheEntryHeader.Read(buffer.WrittenSpan);
                now = _time.GetUtcNow().UtcTicks;
                if (header.IsExpired(now))
                {
                    _db.Delete(k, _writeOptions);
                    return false;
                }
                CacheEntryHeader touched = header.Touched(now);
                if (touched != header)
                {
                    touched.Write(buffer.WrittenSpan);
                    _db.Put(k, buffer.WrittenSpan, _writeOptions);
                }
                return true;
            }
            finally
            {
                stripe.Release();
            }
        }
        finally
        {
            Return(rented);
        }
    }

    private static CacheEntryHeader NewHeader(DistributedCacheEntryOptions options, long now, out bool alreadyExpired)
    {
        long absolute = CacheEntryFormat.Never;
        if (options.AbsoluteExpiration is { } at)
        {
            absolute = at.UtcTicks;
        }
        if (options.AbsoluteExpirationRelativeToNow is { } relative)
        {
            absolute = Math.Min(absolute, CacheEntryFormat.AddSaturating(now, relative.Ticks));
        }
        long sliding = options.SlidingExpiration is { } s ? s.Ticks : 0; // positive: the options' setter checks
        byte flags = (byte)((absolute != CacheEntryFormat.Never ? CacheEntryFormat.FlagAbsolute : 0)
            | (sliding != 0 ? CacheEntryFormat.FlagSliding : 0));
        long expiresAt = sliding != 0 ? Math.Min(absolute, CacheEntryFormat.AddSaturating(now, sliding)) : absolute;
        alreadyExpired = now >= expiresAt;
        return new CacheEntryHeader(flags, expiresAt, absolute, sliding);
    }

    private static void Compose(PooledBufferWriter entry, CacheEntryHeader header, in ReadOnlySequence<byte> value)
    {
        if (value.Length > Array.MaxLength - CacheEntryFormat.HeaderSize)
        {
            throw new ArgumentOutOfRangeException(nameof(value), $"A cache value may hold at most {Array.MaxLength - CacheEntryFormat.HeaderSize} bytes.");
        }
        entry.Reset();
        header.Write(entry.GetSpan(CacheEntryFormat.HeaderSize));
        entry.Advance(CacheEntryFormat.HeaderSize);
        foreach (ReadOnlyMemory<byte> segment in value)
        {
            entry.Write(segment.Span);
        }
    }

    private Span<byte> EncodeKey(string key, Span<byte> stack, ref byte[]? rented)
    {
        int max = _prefix.Length + Encoding.UTF8.GetMaxByteCount(key.Length);
        Span<byte> dest = max <= stack.Length ? stack : (rented = ArrayPool<byte>.Shared.Rent(max));
        _prefix.CopyTo(dest);
        int n = Encoding.UTF8.GetBytes(key, dest.Slice(_prefix.Length));
        return dest.Slice(0, _prefix.Length + n);
    }

    private byte[] EncodeKeyArray(string key, out int length)
    {
        byte[] k = ArrayPool<byte>.Shared.Rent(_prefix.Length + Encoding.UTF8.GetMaxByteCount(key.Length));
        _prefix.CopyTo(k, 0);
        length = _prefix.Length + Encoding.UTF8.GetBytes(key, 0, key.Length, k, _prefix.Length);
        return k;
    }

    private static void Return(byte[]? rented)
    {
        if (rented != null)
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    private SemaphoreSlim Stripe(ReadOnlySpan<byte> key)
    {
        uint h = 2166136261;
        foreach (byte b in key)
        {
            h = (h ^ b) * 16777619;
        }
        return _stripes[h % StripeCount];
    }

    private static PooledBufferWriter RentThreadBuffer() => t_buffer ??= new PooledBufferWriter();

    private void ThrowIfDisposed() => ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
}
