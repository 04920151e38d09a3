using System.Buffers;
using System.Runtime.CompilerServices;
using KvEngine.Db;
using KvEngine.Iterators;

namespace KvEngine;

/// <summary>
/// An open KvEngine database: a persistent, ordered map from byte keys to byte values, stored as an
/// LSM tree in RocksDB's file formats.
/// <para>
/// Thread-safety: every member may be called from any number of threads at once. Writes are
/// atomic per call (a <see cref="WriteBatch"/> applies entirely or not at all) and ordered; reads
/// take no lock. After <see cref="Dispose"/> every call throws <see cref="ObjectDisposedException"/>.
/// </para>
/// </summary>
public sealed class KvDb : IDisposable, IAsyncDisposable
{
    [ThreadStatic]
    private static WriteBatch? t_batch;

    [ThreadStatic]
    private static ArrayBufferWriter<byte>? t_value;

    private readonly DbImpl _impl;

    private KvDb(DbImpl impl)
    {
        _impl = impl;
    }

    /// <summary>The database directory (full path).</summary>
    public string Path => _impl.Directory;

    /// <summary>Sequence number of the last acknowledged write.</summary>
    public ulong LatestSequenceNumber => _impl.Versions.LastSequence;

    /// <summary>Opens (or, with <see cref="KvOptions.CreateIfMissing"/>, creates) the database at <paramref name="path"/>.</summary>
    /// <exception cref="KvCorruptionException">Its files are damaged beyond what the recovery mode tolerates.</exception>
    /// <exception cref="KvException">Another instance holds it, or it is missing or exists against the options.</exception>
    public static KvDb Open(string path, KvOptions? options = null) => new(DbImpl.Open(path, options ?? new KvOptions()));

    /// <summary>Opens the database on a thread-pool thread (recovery reads and writes files).</summary>
    public static async ValueTask<KvDb> OpenAsync(string path, KvOptions? options = null, CancellationToken cancellationToken = default)
    {
        cancellationToken.ThrowIfCancellationRequested();
        return await Task.Run(() => Open(path, options), cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// Sets <paramref name="key"/> to <paramref name="value"/> (RocksDB's Put), replacing any value it
    /// had; returns when the write is as durable as <paramref name="options"/> asks
    /// (<see cref="WriteOptions.Default"/> when null). Keys and values may be empty.
    /// </summary>
    public void Put(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, WriteOptions? options = null)
    {
        WriteBatch b = ThreadBatch();
        b.Put(key, value);
        _impl.Write(b, options ?? WriteOptions.Default);
    }

    /// <summary>
    /// Deletes <paramref name="key"/> (RocksDB's Delete: writes a tombstone, which compaction
    /// drops once no snapshot needs what it hides). Deleting a missing key is not an error.
    /// </summary>
    public void Delete(ReadOnlySpan<byte> key, WriteOptions? options = null)
    {
        WriteBatch b = ThreadBatch();
        b.Delete(key);
        _impl.Write(b, options ?? WriteOptions.Default);
    }

    /// <summary>
    /// Removes every key in [<paramref name="begin"/>, <paramref name="end"/>) (begin inclusive, end
    /// exclusive, as RocksDB's DeleteRange) with one range tombstone, whatever the number of keys.
    /// begin == end does nothing.
    /// </summary>
    /// <exception cref="ArgumentException"><paramref name="begin"/> sorts after <paramref name="end"/>.</exception>
    public void DeleteRange(ReadOnlySpan<byte> begin, ReadOnlySpan<byte> end, WriteOptions? options = null)
    {
        WriteBatch b = ThreadBatch();
        b.DeleteRange(begin, end);
        if (b.Count > 0)
        {
            _impl.Write(b, options ?? WriteOptions.Default);
        }
        else
        {
            _impl.ThrowIfDisposed();
        }
    }

    /// <summary>
    /// Adds the merge operand <paramref name="operand"/> to <paramref name="key"/> (RocksDB's Merge):
    /// a read returns the key's earlier value combined with its operands by
    /// <see cref="ColumnFamilyOptions.MergeOperator"/>, so updates such as counter increments need no
    /// read. Returns when the write is as durable as <paramref name="options"/> asks.
    /// </summary>
    /// <exception cref="InvalidOperationException">No merge operator is configured.</exception>
    public void Merge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> operand, WriteOptions? options = null)
    {
        ThrowIfNoMergeOperator();
        WriteBatch b = ThreadBatch();
        b.Merge(key, operand);
        _impl.Write(b, options ?? WriteOptions.Default);
    }

    /// <summary>
    /// <see cref="Merge"/>, completing when the write is as durable as <paramref name="options"/> asks.
    /// Cancellation is observed only before the write is queued: once queued it is committed.
    /// </summary>
    /// <exception cref="InvalidOperationException">No merge operator is configured (thrown at once).</exception>
    public ValueTask MergeAsync(ReadOnlyMemory<byte> key, ReadOnlyMemory<byte> operand, WriteOptions? options = null,
        CancellationToken cancellationToken = default)
    {
        ThrowIfNoMergeOperator();
        var b = new WriteBatch();
        b.Merge(key.Span, operand.Span);
        return WriteOwnedAsync(b, options, cancellationToken);
    }

    private void ThrowIfNoMergeOperator()
    {
        if (!_impl.HasMergeOperator)
        {
            throw new InvalidOperationException("Merge needs ColumnFamilyOptions.MergeOperator (RocksDB: merge_operator is not properly initialized).");
        }
    }

    /// <summary>Applies every record of <paramref name="batch"/> atomically.</summary>
    public void Write(WriteBatch batch, WriteOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(batch);
        if (batch.HasMerge)
        {
            ThrowIfNoMergeOperator();
        }
        _impl.Write(batch, options ?? WriteOptions.Default);
    }

    /// <summary>
    /// Puts a value; completes when the write is as durable as <paramref name="options"/> asks.
    /// Completes synchronously when no other write is in progress. Cancellation is observed only
    /// before the write is queued: once queued it is committed.
    /// </summary>
    public ValueTask PutAsync(ReadOnlyMemory<byte> key, ReadOnlyMemory<byte> value, WriteOptions? options = null,
        CancellationToken cancellationToken = default)
    {
        var b = new WriteBatch();
        b.Put(key.Span, value.Span);
        return WriteOwnedAsync(b, options, cancellationToken);
    }

    /// <summary>
    /// Deletes <paramref name="key"/>, as <see cref="Delete"/>; completes when the write is as
    /// durable as <paramref name="options"/> asks. Cancellation is observed only before the write
    /// is queued: once queued it is committed.
    /// </summary>
    public ValueTask DeleteAsync(ReadOnlyMemory<byte> key, WriteOptions? options = null, CancellationToken cancellationToken = default)
    {
        var b = new WriteBatch();
        b.Delete(key.Span);
        return WriteOwnedAsync(b, options, cancellationToken);
    }

    /// <summary><see cref="DeleteRange"/>, completing when the write is as durable as <paramref name="options"/> asks.</summary>
    /// <exception cref="ArgumentException"><paramref name="begin"/> sorts after <paramref name="end"/> (thrown at once).</exception>
    public ValueTask DeleteRangeAsync(ReadOnlyMemory<byte> begin, ReadOnlyMemory<byte> end, WriteOptions? options = null,
        CancellationToken cancellationToken = default)
    {
        var b = new WriteBatch();
        try
        {
            b.DeleteRange(begin.Span, end.Span);
        }
        catch
        {
            b.Dispose();
            throw;
        }
        if (b.Count == 0)
        {
            b.Dispose();
            _impl.ThrowIfDisposed();
            return cancellationToken.IsCancellationRequested ? ValueTask.FromCanceled(cancellationToken) : ValueTask.CompletedTask;
        }
        return WriteOwnedAsync(b, options, cancellationToken);
    }

    /// <summary>Applies <paramref name="batch"/> atomically; do not modify it until the task completes.</summary>
    public ValueTask WriteAsync(WriteBatch batch, WriteOptions? options = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(batch);
        if (batch.HasMerge)
        {
            ThrowIfNoMergeOperator();
        }
        return _impl.WriteAsync(batch, options ?? WriteOptions.Default, cancellationToken);
    }

    /// <summary>
    /// Looks <paramref name="key"/> up; when found, appends its value to <paramref name="value"/>
    /// and returns true. Allocates nothing.
    /// </summary>
    public bool TryGet(ReadOnlySpan<byte> key, IBufferWriter<byte> value, ReadOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(value);
        return _impl.TryGet(key, value, options ?? ReadOptions.Default);
    }

    /// <summary>The value of <paramref name="key"/>, or null when absent.</summary>
    public byte[]? Get(ReadOnlySpan<byte> key, ReadOptions? options = null)
    {
        ArrayBufferWriter<byte> w = t_value ??= new ArrayBufferWriter<byte>(256);
        w.ResetWrittenCount();
        return _impl.TryGet(key, w, options ?? ReadOptions.Default) ? w.WrittenSpan.ToArray() : null;
    }

    /// <summary>
    /// The value of <paramref name="key"/>, or null. Table reads are positional reads of the page
    /// cache or disk done inline, so this completes synchronously.
    /// </summary>
    public ValueTask<byte[]?> GetAsync(ReadOnlyMemory<byte> key, ReadOptions? options = null, CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<byte[]?>(cancellationToken);
        }
        try
        {
            return new ValueTask<byte[]?>(Get(key.Span, options));
        }
        catch (Exception e) when (e is KvException or IOException)
        {
            return ValueTask.FromException<byte[]?>(e);
        }
    }

    /// <summary>A snapshot of the current state; dispose it when done.</summary>
    public Snapshot GetSnapshot() => _impl.GetSnapshot();

    /// <summary>A new iterator over the database; dispose it when done.</summary>
    public KvIterator NewIterator(ReadOptions? options = null)
    {
        return new KvIterator(_impl, _impl.NewIterator(options ?? ReadOptions.Default));
    }

    /// <summary>
    /// Every key in [<paramref name="from"/>, <paramref name="to"/>) in order, with its value, as of
    /// the moment the scan starts (or the options' snapshot). An empty <paramref name="to"/> means
    /// no upper bound. Keys and values are copied, since they outlive the iterator position.
    /// </summary>
    public async IAsyncEnumerable<KeyValuePair<byte[], byte[]>> ScanAsync(ReadOnlyMemory<byte> from, ReadOnlyMemory<byte> to,
        ReadOptions? options = null, [EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        var ro = new ReadOptions
        {
            Snapshot = options?.Snapshot,
            VerifyChecksums = options?.VerifyChecksums ?? true,
            IterateLowerBound = from.ToArray(),
            IterateUpperBound = to.IsEmpty ? null : to.ToArray(),
        };
        using KvIterator it = NewIterator(ro);
        it.Seek(from.Span);
        int sinceYield = 0;
        while (it.Valid)
        {
            cancellationToken.ThrowIfCancellationRequested();
            var pair = new KeyValuePair<byte[], byte[]>(it.Key.ToArray(), it.Value.ToArray());
            it.Next();
            if (++sinceYield == 1024)
            {
                sinceYield = 0;
                await Task.Yield();
            }
            yield return pair;
        }
    }

    /// <summary>Writes the memtable to a table file and waits until it is recorded.</summary>
    public void Flush()
    {
        _impl.Flush();
    }

    /// <summary>Like <see cref="Flush"/>, without blocking the calling thread while the table is written.</summary>
    public ValueTask FlushAsync(CancellationToken cancellationToken = default) => _impl.FlushAsync(cancellationToken);

    /// <summary>
    /// Compacts the keys in [<paramref name="begin"/>, <paramref name="end"/>] (null = unbounded):
    /// flushes the memtable, then merges every level holding such keys into the next, down to the
    /// deepest level that holds any, dropping overwritten versions and deletions no snapshot needs.
    /// With a <see cref="ColumnFamilyOptions.CompactionFilter"/> set, that deepest level is then rewritten in
    /// place too, so the filter sees every value of the range.
    /// Runs on the calling thread and returns when done.
    /// </summary>
    public void CompactRange(byte[]? begin, byte[]? end) => _impl.CompactRange(begin, end);

    /// <summary><see cref="CompactRange"/> on a thread-pool thread.</summary>
    public ValueTask CompactRangeAsync(byte[]? begin, byte[]? end, CancellationToken cancellationToken = default) =>
        _impl.CompactRangeAsync(begin, end, cancellationToken);

    /// <summary>The engine, for tests and benchmarks that look inside.</summary>
    internal DbImpl Impl => _impl;

    /// <summary>Counters of background work (RocksDB ticker names), for benchmarks and tests.</summary>
    internal Compaction.EngineCounters Counters => _impl.Counters;

    /// <summary>
    /// A statistic by RocksDB's property name (e.g. "rocksdb.num-files-at-level0",
    /// "rocksdb.cur-size-active-mem-table", "rocksdb.levelstats"), or null for an unknown name.
    /// "kvengine.latest-sequence-number" gives the last sequence number.
    /// </summary>
    public string? GetProperty(string name) => _impl.GetProperty(name);

    /// <summary>
    /// Leaves the background-error state without reopening (RocksDB's DB::Resume): after a failed
    /// WAL write, flush or compaction the database refuses writes; this starts a fresh WAL, flushes
    /// every memtable and then accepts writes again. Running out of disk space is resumed
    /// automatically (<see cref="KvOptions.MaxBackgroundErrorResumeCount"/>); other I/O errors wait
    /// for this call. Does nothing when there is no error.
    /// </summary>
    /// <exception cref="KvException">Recovery failed (the cause is inside; the error state stays), or the error was corruption.</exception>
    public void Resume() => _impl.Resume();

    /// <summary>
    /// Closes the database (RocksDB's DB::Close): writes made with <see cref="WriteOptions.DisableWal"/>
    /// are flushed, background work stops, files and the LOCK are released. Unlike
    /// <see cref="Dispose"/> it reports a failure to persist: <see cref="KvException"/> after
    /// every resource was released anyway. Calling it again, or disposing afterwards, does nothing.
    /// </summary>
    /// <exception cref="KvException">Closing could not persist everything (an I/O error).</exception>
    public void Close() => _impl.Close();

    /// <summary>
    /// Closes the database like <see cref="Close"/> but never throws (.NET's rule for Dispose): a
    /// failure is written to <see cref="System.Diagnostics.Trace"/>. Writes acknowledged through the
    /// WAL are never lost by a failed close; the next open replays them.
    /// </summary>
    public void Dispose() => _impl.Dispose();

    /// <summary>Closes the database like <see cref="Dispose"/>; never throws.</summary>
    public ValueTask DisposeAsync()
    {
        Dispose();
        return ValueTask.CompletedTask;
    }

    private static WriteBatch ThreadBatch()
    {
        WriteBatch b = t_batch ??= new WriteBatch();
        b.Clear();
        return b;
    }

    private async ValueTask WriteOwnedAsync(WriteBatch batch, WriteOptions? options, CancellationToken cancellationToken)
    {
        try
        {
            await _impl.WriteAsync(batch, options ?? WriteOptions.Default, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            batch.Dispose();
        }
    }
}
