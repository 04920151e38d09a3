using System.Buffers;

namespace KvEngine;

/// <summary>
/// The asynchronous point reads: Get, TryGet and MultiGet that wait for the device without
/// holding a thread (RocksDB's async MultiGet idea; see docs/design.md, "Asynchronous point reads").
/// </summary>
public sealed partial class KvDb
{
    /// <summary>
    /// The value of <paramref name="key"/>, or null when absent. Completes synchronously when the
    /// memtables decide or every block the lookup needs is in the block cache; otherwise the table
    /// reads go to the I/O engine (io_uring where the kernel allows it, else the thread pool) and
    /// the call resumes when they complete, no thread blocked meanwhile. The lookup sees one point
    /// in time: the state and sequence taken when it starts.
    /// </summary>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> fired before the lookup finished (a read it awaited is abandoned; the engine keeps its buffer until the kernel is done with it).</exception>
    /// <exception cref="ObjectDisposedException">The database was disposed before the lookup finished.</exception>
    /// <exception cref="KvCorruptionException">A block the lookup read is corrupt.</exception>
    /// <exception cref="IOException">A read failed.</exception>
    public ValueTask<byte[]?> GetAsync(ReadOnlyMemory<byte> key, ReadOptions? options = null, CancellationToken cancellationToken = default) =>
        _impl.GetAsync(_impl.DefaultFamily, key, options ?? ReadOptions.Default, cancellationToken);

    /// <summary>The value of <paramref name="key"/> in <paramref name="columnFamily"/>, or null; see <see cref="GetAsync(ReadOnlyMemory{byte}, ReadOptions?, CancellationToken)"/>.</summary>
    /// <exception cref="ArgumentException">The family belongs to another database, or was dropped and its handle disposed (a dropped family's handle keeps serving reads of its last state until then).</exception>
    public ValueTask<byte[]?> GetAsync(ColumnFamilyHandle columnFamily, ReadOnlyMemory<byte> key, ReadOptions? options = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(columnFamily);
        return _impl.GetAsync(_impl.ResolveForRead(columnFamily), key, options ?? ReadOptions.Default, cancellationToken);
    }

    /// <summary>
    /// Looks <paramref name="key"/> up; when found, appends its value to <paramref name="value"/>
    /// and completes with true. Completes synchronously, allocating nothing, when the memtables
    /// decide or every block needed is cached; otherwise awaits the table reads without blocking a
    /// thread (see <see cref="GetAsync(ReadOnlyMemory{byte}, ReadOptions?, CancellationToken)"/>),
    /// with a bounded amount of pooled state. <paramref name="value"/> is written only once the
    /// lookup has found the value, and must not be used by the caller until the call completes.
    /// </summary>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> fired before the lookup finished.</exception>
    /// <exception cref="ObjectDisposedException">The database was disposed before the lookup finished.</exception>
    /// <exception cref="KvCorruptionException">A block the lookup read is corrupt.</exception>
    /// <exception cref="IOException">A read failed.</exception>
    public ValueTask<bool> TryGetAsync(ReadOnlyMemory<byte> key, IBufferWriter<byte> value, ReadOptions? options = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(value);
        return _impl.TryGetAsync(_impl.DefaultFamily, key, value, options ?? ReadOptions.Default, cancellationToken);
    }

    /// <summary>Looks <paramref name="key"/> up in <paramref name="columnFamily"/>; see <see cref="TryGetAsync(ReadOnlyMemory{byte}, IBufferWriter{byte}, ReadOptions?, CancellationToken)"/>.</summary>
    /// <exception cref="ArgumentException">The family belongs to another database, or was dropped and its handle disposed (a dropped family's handle keeps serving reads of its last state until then).</exception>
    public ValueTask<bool> TryGetAsync(ColumnFamilyHandle columnFamily, ReadOnlyMemory<byte> key, IBufferWriter<byte> value, ReadOptions? options = null,
        CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(columnFamily);
        ArgumentNullException.ThrowIfNull(value);
        return _impl.TryGetAsync(_impl.ResolveForRead(columnFamily), key, value, options ?? ReadOptions.Default, cancellationToken);
    }

    /// <summary>
    /// Looks up every key of <paramref name="keys"/> at one point in time, as
    /// <see cref="MultiGet(ReadOnlySpan{ReadOnlyMemory{byte}}, MultiGetResults, ReadOptions?)"/>
    /// does, into <paramref name="results"/> (reset by the call; not to be used until it
    /// completes). Completes synchronously, allocating nothing once <paramref name="results"/> has
    /// grown, when every block the batch needs is cached. Otherwise the keys proceed in rounds: each
    /// round submits the next block read of every unfinished key in one batch (one io_uring_enter)
    /// and awaits them without blocking a thread.
    /// </summary>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> fired before the batch finished.</exception>
    /// <exception cref="ObjectDisposedException">The database was disposed before the batch finished.</exception>
    /// <exception cref="KvCorruptionException">A block any key's lookup needed is corrupt: the whole batch fails.</exception>
    /// <exception cref="IOException">A read failed.</exception>
    public ValueTask MultiGetAsync(ReadOnlyMemory<ReadOnlyMemory<byte>> keys, MultiGetResults results, ReadOptions? options = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(results);
        return _impl.MultiGetAsync(_impl.DefaultFamily, keys, results, options ?? ReadOptions.Default, cancellationToken);
    }

    /// <summary>Looks up <paramref name="keys"/> in <paramref name="columnFamily"/>; see <see cref="MultiGetAsync(ReadOnlyMemory{ReadOnlyMemory{byte}}, MultiGetResults, ReadOptions?, CancellationToken)"/>.</summary>
    /// <exception cref="ArgumentException">The family belongs to another database, or was dropped and its handle disposed (a dropped family's handle keeps serving reads of its last state until then).</exception>
    public ValueTask MultiGetAsync(ColumnFamilyHandle columnFamily, ReadOnlyMemory<ReadOnlyMemory<byte>> keys, MultiGetResults results, ReadOptions? options = null,
        CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(columnFamily);
        ArgumentNullException.ThrowIfNull(results);
        return _impl.MultiGetAsync(_impl.ResolveForRead(columnFamily), keys, results, options ?? ReadOptions.Default, cancellationToken);
    }

    /// <summary>
    /// The values of <paramref name="keys"/> (null for an absent key), in the keys' order, read at
    /// one point in time; see <see cref="MultiGetAsync(ReadOnlyMemory{ReadOnlyMemory{byte}}, MultiGetResults, ReadOptions?, CancellationToken)"/>.
    /// </summary>
    public ValueTask<byte[]?[]> MultiGetAsync(IReadOnlyList<byte[]> keys, ReadOptions? options = null, CancellationToken cancellationToken = default) =>
        MultiGetArraysAsync(_impl.DefaultFamily, keys, options, cancellationToken);

    /// <summary>The values of <paramref name="keys"/> in <paramref name="columnFamily"/>; see <see cref="MultiGetAsync(IReadOnlyList{byte[]}, ReadOptions?, CancellationToken)"/>.</summary>
    /// <exception cref="ArgumentException">The family belongs to another database, or was dropped and its handle disposed (a dropped family's handle keeps serving reads of its last state until then).</exception>
    public ValueTask<byte[]?[]> MultiGetAsync(ColumnFamilyHandle columnFamily, IReadOnlyList<byte[]> keys, ReadOptions? options = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(columnFamily);
        return MultiGetArraysAsync(_impl.ResolveForRead(columnFamily), keys, options, cancellationToken);
    }

    private async ValueTask<byte[]?[]> MultiGetArraysAsync(Db.State.ColumnFamilyData cfd, IReadOnlyList<byte[]> keys, ReadOptions? options, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(keys);
        var memories = new ReadOnlyMemory<byte>[keys.Count];
        for (int i = 0; i < memories.Length; i++)
        {
            memories[i] = keys[i] ?? throw new ArgumentException($"Key {i} is null.", nameof(keys));
        }
        using var results = new MultiGetResults(memories.Length);
        await _impl.MultiGetAsync(cfd, memories, results, options ?? ReadOptions.Default, cancellationToken).ConfigureAwait(false);
        var values = new byte[]?[memories.Length];
        for (int i = 0; i < values.Length; i++)
        {
            values[i] = results.ToArray(i);
        }
        return values;
    }
}
