using KvEngine.Db.Write;
using KvEngine.Transactions;

namespace KvEngine;

/// <summary>
/// An optimistic transaction (RocksDB's Transaction from an OptimisticTransactionDB): writes go to
/// a <see cref="WriteBatchWithIndex"/> and are read back by <see cref="Get(ReadOptions?, ReadOnlySpan{byte})"/>
/// and <see cref="NewIterator(ReadOptions?)"/>; <see cref="Commit"/> writes them atomically.
/// <para>
/// Conflicts (RocksDB's semantics): every key written, and every key read with
/// <see cref="GetForUpdate(ReadOptions?, ReadOnlySpan{byte})"/>, is tracked with a sequence
/// number: the snapshot's when <see cref="SetSnapshot"/> was called before, otherwise the
/// database's latest when the key was first touched. The commit fails with
/// <see cref="KvBusyException"/> if any tracked key was written after its sequence, or with a
/// <see cref="KvException"/> whose <see cref="KvException.StatusCode"/> is
/// <see cref="KvStatusCode.TryAgain"/> if that can no longer be told (see
/// <see cref="OptimisticTransactionDb"/>); nothing is written then, and the caller retries. Plain <see cref="Get(ReadOptions?, ReadOnlySpan{byte})"/> reads are not tracked.
/// Reads use the <see cref="ReadOptions"/> given: to read at the transaction's snapshot pass
/// <see cref="Snapshot"/> in <see cref="ReadOptions.Snapshot"/>, as in RocksDB.
/// </para>
/// <para>
/// After <see cref="Commit"/> (whether it succeeded or threw) or <see cref="Rollback"/> the
/// transaction is finished: further calls throw <see cref="InvalidOperationException"/>; begin a
/// new one to retry. Not thread-safe. Dispose it: it releases its snapshot and batch.
/// </para>
/// </summary>
public sealed class Transaction : IDisposable
{
    private readonly KvDb _db;
    private readonly WriteOptions _writeOptions;
    private readonly WriteBatchWithIndex _batch = new(overwriteKey: true);
    private readonly Dictionary<(uint ColumnFamily, byte[] Key), int> _trackedIndex = new(TrackedKeyComparer.Instance);
    private readonly List<TrackedKey> _tracked = new();
    private readonly Stack<(int Tracked, Snapshot? Snapshot)> _savePoints = new();
    private Snapshot? _snapshot;
    private bool _finished;
    private bool _disposed;

    internal Transaction(KvDb db, WriteOptions writeOptions, bool setSnapshot)
    {
        _db = db;
        _writeOptions = writeOptions;
        if (setSnapshot)
        {
            SetSnapshot();
        }
    }

    /// <summary>The snapshot set by <see cref="SetSnapshot"/>, or null (RocksDB's GetSnapshot).</summary>
    public Snapshot? Snapshot => _snapshot;

    /// <summary>The transaction's writes so far (RocksDB's GetWriteBatch). Read it, do not modify it.</summary>
    public WriteBatchWithIndex WriteBatch
    {
        get
        {
            ThrowIfFinished();
            return _batch;
        }
    }

    /// <summary>The sequence number of the transaction's first write once committed (tests: history checks); 0 before.</summary>
    internal ulong CommitSequence { get; private set; }

    /// <summary>Keys tracked for the conflict check.</summary>
    internal int TrackedKeys => _tracked.Count;

    /// <summary>
    /// Takes a snapshot of the database now (RocksDB's SetSnapshot): keys touched from now on are
    /// checked against it. Released when the transaction is disposed.
    /// </summary>
    public void SetSnapshot()
    {
        ThrowIfFinished();
        Snapshot previous = _db.GetSnapshot();
        (_snapshot, previous) = (previous, _snapshot!);
        if (previous != null && !IsHeldBySavePoint(previous))
        {
            previous.Dispose();
        }
    }

    /// <summary>Stores <paramref name="value"/> under <paramref name="key"/> at commit.</summary>
    public void Put(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) => Put(_db.DefaultColumnFamily, key, value);

    /// <summary>Stores <paramref name="value"/> under <paramref name="key"/> in <paramref name="columnFamily"/> at commit.</summary>
    public void Put(ColumnFamilyHandle columnFamily, ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
    {
        Track(columnFamily, key);
        _batch.Put(columnFamily, key, value);
    }

    /// <summary>Removes <paramref name="key"/> at commit.</summary>
    public void Delete(ReadOnlySpan<byte> key) => Delete(_db.DefaultColumnFamily, key);

    /// <summary>Removes <paramref name="key"/> from <paramref name="columnFamily"/> at commit.</summary>
    public void Delete(ColumnFamilyHandle columnFamily, ReadOnlySpan<byte> key)
    {
        Track(columnFamily, key);
        _batch.Delete(columnFamily, key);
    }

    /// <summary>Adds a merge operand for <paramref name="key"/> at commit.</summary>
    public void Merge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> operand) => Merge(_db.DefaultColumnFamily, key, operand);

    /// <summary>Adds a merge operand for <paramref name="key"/> in <paramref name="columnFamily"/> at commit.</summary>
    public void Merge(ColumnFamilyHandle columnFamily, ReadOnlySpan<byte> key, ReadOnlySpan<byte> operand)
    {
        Track(columnFamily, key);
        _batch.Merge(columnFamily, key, operand);
    }

    /// <summary>The value of <paramref name="key"/> with the transaction's own writes applied (not tracked); null when absent.</summary>
    public byte[]? Get(ReadOptions? options, ReadOnlySpan<byte> key) => Get(options, _db.DefaultColumnFamily, key);

    /// <summary>The value of <paramref name="key"/> in <paramref name="columnFamily"/> with the transaction's own writes applied (not tracked).</summary>
    public byte[]? Get(ReadOptions? options, ColumnFamilyHandle columnFamily, ReadOnlySpan<byte> key)
    {
        ThrowIfFinished();
        return _batch.GetFromBatchAndDB(_db, columnFamily, options, key);
    }

    /// <summary>
    /// Reads <paramref name="key"/> like <see cref="Get(ReadOptions?, ReadOnlySpan{byte})"/> and
    /// tracks it: the commit fails if it is written by someone else after the transaction's
    /// snapshot (or, without one, after this read).
    /// </summary>
    public byte[]? GetForUpdate(ReadOptions? options, ReadOnlySpan<byte> key) => GetForUpdate(options, _db.DefaultColumnFamily, key);

    /// <summary>Reads and tracks <paramref name="key"/> in <paramref name="columnFamily"/>; see <see cref="GetForUpdate(ReadOptions?, ReadOnlySpan{byte})"/>.</summary>
    public byte[]? GetForUpdate(ReadOptions? options, ColumnFamilyHandle columnFamily, ReadOnlySpan<byte> key)
    {
        Track(columnFamily, key);
        return _batch.GetFromBatchAndDB(_db, columnFamily, options, key);
    }

    /// <summary>
    /// An iterator over the database (read with <paramref name="options"/>) overlaid with the
    /// transaction's writes (RocksDB's Transaction::GetIterator); the keys it visits are not tracked.
    /// </summary>
    public KvIteratorWithBase NewIterator(ReadOptions? options = null) => NewIterator(_db.DefaultColumnFamily, options);

    /// <summary>An iterator over <paramref name="columnFamily"/> overlaid with the transaction's writes.</summary>
    public KvIteratorWithBase NewIterator(ColumnFamilyHandle columnFamily, ReadOptions? options = null)
    {
        ThrowIfFinished();
        return _batch.NewIteratorWithBase(columnFamily, _db.NewIterator(columnFamily, options), options);
    }

    /// <summary>Records the transaction's state for <see cref="RollbackToSavePoint"/>.</summary>
    public void SetSavePoint()
    {
        ThrowIfFinished();
        _batch.SetSavePoint();
        _savePoints.Push((_tracked.Count, _snapshot));
    }

    /// <summary>
    /// Undoes the writes made since the newest save point and stops tracking the keys first
    /// touched since then; the snapshot goes back to the one the save point saw (RocksDB's
    /// RollbackToSavePoint).
    /// </summary>
    /// <exception cref="InvalidOperationException">No save point is set.</exception>
    public void RollbackToSavePoint()
    {
        ThrowIfFinished();
        if (!_savePoints.TryPop(out (int Tracked, Snapshot? Snapshot) point))
        {
            throw new InvalidOperationException("No save point is set.");
        }
        _batch.RollbackToSavePoint();
        for (int i = _tracked.Count - 1; i >= point.Tracked; i--)
        {
            _trackedIndex.Remove((_tracked[i].ColumnFamily, _tracked[i].Key));
        }
        _tracked.RemoveRange(point.Tracked, _tracked.Count - point.Tracked);
        if (!ReferenceEquals(_snapshot, point.Snapshot))
        {
            Snapshot? later = _snapshot;
            _snapshot = point.Snapshot;
            if (later != null && !IsHeldBySavePoint(later))
            {
                later.Dispose();
            }
        }
    }

    /// <summary>
    /// Writes the transaction's writes atomically, unless a tracked key was written after the
    /// transaction's sequence for it. The transaction is finished afterwards either way.
    /// </summary>
    /// <exception cref="KvBusyException">A write conflict (RocksDB's Busy): nothing was written; retry.</exception>
    /// <exception cref="KvException">With <see cref="KvException.StatusCode"/> <see cref="KvStatusCode.TryAgain"/>: the
    /// memtables no longer reach back to the transaction's sequence, so the conflict check cannot decide (RocksDB's
    /// TryAgain); nothing was written; retry.</exception>
    public void Commit()
    {
        ThrowIfFinished();
        _finished = true;
        _db.Impl.Write(_batch.WriteBatch, _writeOptions, new ConflictChecker(_tracked));
        CommitSequence = _batch.WriteBatch.Sequence; // the write path set it (the batch led its group alone)
    }

    /// <summary>Discards the transaction's writes; the transaction is finished.</summary>
    public void Rollback()
    {
        ThrowIfFinished();
        _finished = true;
        _batch.Clear();
    }

    /// <summary>Releases the snapshot and the batch.</summary>
    public void Dispose()
    {
        if (_disposed)
        {
            return;
        }
        _disposed = true;
        _finished = true;
        _snapshot?.Dispose();
        foreach ((int _, Snapshot? s) in _savePoints)
        {
            s?.Dispose();
        }
        _batch.Dispose();
    }

    private bool IsHeldBySavePoint(Snapshot snapshot)
    {
        foreach ((int _, Snapshot? s) in _savePoints)
        {
            if (ReferenceEquals(s, snapshot))
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>Tracks the key at the snapshot's sequence, or the latest one, keeping the earliest.</summary>
    private void Track(ColumnFamilyHandle columnFamily, ReadOnlySpan<byte> key)
    {
        ThrowIfFinished();
        ArgumentNullException.ThrowIfNull(columnFamily);
        ulong sequence = _snapshot?.Sequence ?? _db.LatestSequenceNumber;
        byte[] copy = key.ToArray();
        if (_trackedIndex.TryGetValue((columnFamily.Id, copy), out int i))
        {
            if (sequence < _tracked[i].Sequence)
            {
                _tracked[i] = _tracked[i] with { Sequence = sequence };
            }
            return;
        }
        _trackedIndex.Add((columnFamily.Id, copy), _tracked.Count);
        _tracked.Add(new TrackedKey(columnFamily.Id, copy, sequence));
    }

    private void ThrowIfFinished()
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        if (_finished)
        {
            throw new InvalidOperationException("The transaction was committed or rolled back; begin a new one.");
        }
    }
}
