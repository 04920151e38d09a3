using System.Buffers;
using KvEngine.Db.Read;
using KvEngine.Db.State;

namespace KvEngine.Db;

/// <summary>
/// The read path's entry points: each pins the family's read state, then takes the read sequence
/// (in that order: see <see cref="TryGet"/>), and hands both to the type that does the work
/// (<see cref="PointReader"/>, <see cref="MultiGetReader"/>, <see cref="KeyMayExistLookup"/>,
/// iterators); lock-free.
/// </summary>
internal sealed partial class DbImpl
{
    public bool TryGet(ColumnFamilyData cfd, ReadOnlySpan<byte> key, IBufferWriter<byte> value, ReadOptions options)
    {
        ThrowIfDisposed();
        // The state first, then the sequence (as RocksDB does): compaction keeps the newest version
        // of every key as of any installed version, so nothing at or below the sequence that this
        // state holds has been dropped; writes that land in memtables newer than it are simply not
        // seen, as if the read happened when the state was pinned.
        ReadState state = cfd.AcquireReadState();
        _stats?.Record(Ticker.NumberKeysRead);
        try
        {
            ulong sequence = ReadSequence(options);
            return _pointReader.TryGet(cfd, state, key, sequence, value, options);
        }
        finally
        {
            state.Unref();
        }
    }

    /// <summary>Batched point lookups (<see cref="MultiGetReader"/>) over one pinned read state at one sequence.</summary>
    public void MultiGet(ColumnFamilyData cfd, ReadOnlySpan<ReadOnlyMemory<byte>> keys, MultiGetResults results, ReadOptions options)
    {
        ThrowIfDisposed();
        results.Reset(keys.Length);
        if (keys.Length == 0)
        {
            return;
        }
        ReadState state = cfd.AcquireReadState(); // the state, then the sequence (see TryGet)
        try
        {
            ulong sequence = ReadSequence(options);
            _multiGetReader.MultiGet(cfd, state, sequence, keys, results, options);
        }
        finally
        {
            state.Unref();
        }
    }

    /// <summary>RocksDB's KeyMayExist, without I/O (<see cref="KeyMayExistLookup"/>).</summary>
    public bool KeyMayExist(ColumnFamilyData cfd, ReadOnlySpan<byte> key, IBufferWriter<byte>? value, ReadOptions options, out bool valueFound)
    {
        ThrowIfDisposed();
        valueFound = false;
        ReadState state = cfd.AcquireReadState();
        try
        {
            ulong sequence = ReadSequence(options);
            return KeyMayExistLookup.MayExist(cfd, state, key, sequence, value, out valueFound);
        }
        finally
        {
            state.Unref();
        }
    }

    /// <summary>
    /// An iterator over the current read state at <paramref name="options"/>' sequence: a parked
    /// spare that can serve it, reset (<see cref="IteratorBuilder.TakeSpare"/>), or a new tree.
    /// </summary>
    public PinnedIterator NewIterator(ColumnFamilyData cfd, ReadOptions options)
    {
        ThrowIfDisposed();
        ReadState state = cfd.AcquireReadState();
        try
        {
            ulong sequence = ReadSequence(options);
            // RocksDB: prefix filters skip tables unless total_order_seek; prefix_same_as_start bounds the
            // iteration to the start key's prefix whenever the family has an extractor.
            KvPrefixExtractor? extractor = cfd.Options.PrefixExtractor;
            KvPrefixExtractor? prefixSeek = options.TotalOrderSeek ? null : extractor;
            KvPrefixExtractor? sameAsStart = options.PrefixSameAsStart ? extractor : null;
            if (IteratorBuilder.TakeSpare(cfd, state, options.VerifyChecksums, options.FillCache, prefixSeek) is { } spare)
            {
                state.Unref(); // the spare holds its own reference on the same state
                spare.Reset(sequence, options.IterateLowerBound, options.IterateUpperBound, options.Snapshot != null);
                spare.Iterator.PrefixSameAsStart = sameAsStart;
                return spare;
            }
            PinnedIterator built = IteratorBuilder.Build(cfd, state, sequence, options.VerifyChecksums, options.FillCache, options.IterateLowerBound, options.IterateUpperBound,
                options.Snapshot != null, prefixSeek);
            built.Iterator.PrefixSameAsStart = sameAsStart;
            return built;
        }
        catch
        {
            state.Unref();
            throw;
        }
    }

    /// <summary>A public iterator over <paramref name="pinned"/>: a lease of a pooled cursor (see <see cref="IteratorCursor"/>).</summary>
    public KvIterator LeaseIterator(PinnedIterator pinned)
    {
        IteratorCursor cursor = IteratorCursors.Rent();
        return new KvIterator(cursor, cursor.Lease(pinned));
    }

    /// <summary>
    /// RocksDB's Iterator::Refresh: the iterator now reads the database's latest state (sequence,
    /// memtables, files), not Valid until positioned. The tree is reset in place when the read state
    /// is unchanged, rebuilt otherwise.
    /// </summary>
    public PinnedIterator RefreshIterator(PinnedIterator it)
    {
        ThrowIfDisposed();
        if (it.HasSnapshot)
        {
            throw new KvNotSupportedException("Refresh is not supported on an iterator created with ReadOptions.Snapshot (as in RocksDB).");
        }
        ReadState state = it.Family.AcquireReadState();
        PinnedIterator result;
        try
        {
            ulong sequence = _versions.LastSequence;
            if (it.CanServe(state, it.VerifyChecksums, it.FillCache, it.PrefixSeek))
            {
                state.Unref();
                it.Reset(sequence, it.Iterator.LowerBound, it.Iterator.UpperBound, hasSnapshot: false);
                return it;
            }
            result = IteratorBuilder.Build(it.Family, state, sequence, it.VerifyChecksums, it.FillCache, it.Iterator.LowerBound, it.Iterator.UpperBound, hasSnapshot: false,
                it.PrefixSeek);
            result.Iterator.PrefixSameAsStart = it.Iterator.PrefixSameAsStart;
        }
        catch
        {
            state.Unref();
            throw;
        }
        it.Dispose();
        return result;
    }

    /// <summary>
    /// Takes back a disposed <see cref="KvIterator"/>'s tree: parked as a spare (its blocks unpinned)
    /// while its read state is current and a slot is free, disposed otherwise. A state installed meanwhile drops the
    /// spares (<see cref="ColumnFamilyData.DropSpareIterators"/>); the re-check after parking closes the race with it,
    /// so no spare pins a superseded state.
    /// </summary>
    public void ReturnIterator(PinnedIterator it)
    {
        ColumnFamilyData cfd = it.Family;
        if (Volatile.Read(ref _disposed) == 0 && !cfd.IsDropped && ReferenceEquals(cfd.CurrentReadState, it.State))
        {
            it.Iterator.Unpin(); // a spare pins no block: the cache's pinned usage is the live iterators'
            ISpareIterator?[] spares = cfd.SpareIterators;
            for (int i = 0; i < spares.Length; i++)
            {
                if (Interlocked.CompareExchange(ref spares[i], it, null) is null)
                {
                    if (!ReferenceEquals(cfd.CurrentReadState, it.State) || Volatile.Read(ref _disposed) != 0 || cfd.IsDropped)
                    {
                        Interlocked.CompareExchange(ref spares[i], null, it)?.Dispose();
                    }
                    return;
                }
            }
        }
        it.Dispose();
    }

    public Snapshot GetSnapshot()
    {
        ThrowIfDisposed();
        // Read under the list's lock, so a compaction that lists the snapshots either sees this one
        // or ran entirely before its sequence number was taken; and under the database mutex (as
        // RocksDB's GetSnapshotImpl), so an ingestion, which decides under it whether a snapshot
        // forces a new sequence number and installs its files before releasing it, sees this
        // snapshot or finishes before it is taken: a snapshot never watches ingested data appear.
        using (_mutex.Lock())
        {
            return _snapshots.CreateAtLatest(_versions);
        }
    }

    private ulong ReadSequence(ReadOptions options)
    {
        Snapshot? s = options.Snapshot;
        if (s == null)
        {
            return _versions.LastSequence;
        }
        if (!s.BelongsTo(_snapshots))
        {
            throw new ArgumentException("The snapshot belongs to another database.", nameof(options));
        }
        ObjectDisposedException.ThrowIf(s.IsReleased, s);
        return s.Sequence;
    }
}
