using System.Buffers;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Memtable;

using ValueType = KvEngine.Format.ValueType;
using KvEngine.Versions;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Db;

/// <summary>The read path: point lookups and iterators, lock-free over a pinned read state.</summary>
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
        KvStatistics? stats = _stats;
        stats?.Record(Ticker.NumberKeysRead);
        try
        {
            ulong sequence = ReadSequence(options);
            ulong covering = 0;
            bool found;
            if (TryGetFromMemTables(state, key, sequence, value, ref covering, out ValueType memType))
            {
                stats?.Record(Ticker.MemtableHit);
                found = memType == ValueType.Merge
                    ? MergeLookup.TryGet(state, cfd.Tables, cfd.Options.MergeOperator, key, sequence, value, options.VerifyChecksums, options.FillCache)
                    : CheckType(memType);
            }
            else
            {
                stats?.Record(Ticker.MemtableMiss);
                found = state.Version.TryGet(cfd.Tables, key, sequence, value, options.VerifyChecksums, out ValueType type, out int level, options.FillCache, ref covering) &&
                    (type == ValueType.Merge
                        ? MergeLookup.TryGet(state, cfd.Tables, cfd.Options.MergeOperator, key, sequence, value, options.VerifyChecksums, options.FillCache)
                        : CheckType(type));
                if (stats != null && level >= 0)
                {
                    stats.Record(level == 0 ? Ticker.GetHitL0 : level == 1 ? Ticker.GetHitL1 : Ticker.GetHitL2AndUp);
                }
            }
            return found;
        }
        finally
        {
            state.Unref();
        }
    }

    /// <summary>
    /// An iterator over the current read state at <paramref name="options"/>' sequence. A spare
    /// tree parked by a disposed iterator over the same read state (no memtable switch, flush or
    /// compaction since) with the same table options is reset and reused, so creating an iterator
    /// allocates nothing in steady state; otherwise a new tree is built.
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
            PinnedIterator?[] spares = cfd.SpareIterators;
            for (int i = 0; i < spares.Length; i++)
            {
                if (Volatile.Read(ref spares[i]) is null)
                {
                    continue;
                }
                PinnedIterator? spare = Interlocked.Exchange(ref spares[i], null);
                if (spare is null)
                {
                    continue;
                }
                if (spare.CanServe(state, options.VerifyChecksums, options.FillCache, prefixSeek))
                {
                    state.Unref(); // the spare holds its own reference on the same state
                    spare.Reset(sequence, options.IterateLowerBound, options.IterateUpperBound, options.Snapshot != null);
                    spare.Iterator.PrefixSameAsStart = sameAsStart;
                    return spare;
                }
                spare.Dispose(); // stale: its read state is gone or its options differ
            }
            PinnedIterator built = BuildIterator(cfd, state, sequence, options.VerifyChecksums, options.FillCache, options.IterateLowerBound, options.IterateUpperBound,
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
            throw new NotSupportedException("Refresh is not supported on an iterator created with ReadOptions.Snapshot (as in RocksDB).");
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
            result = BuildIterator(it.Family, state, sequence, it.VerifyChecksums, it.FillCache, it.Iterator.LowerBound, it.Iterator.UpperBound, hasSnapshot: false,
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
            PinnedIterator?[] spares = cfd.SpareIterators;
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

    private PinnedIterator BuildIterator(ColumnFamilyData cfd, ReadState state, ulong sequence, bool verifyChecksums, bool fillCache, byte[]? lower, byte[]? upper, bool hasSnapshot,
        KvPrefixExtractor? prefixSeek)
    {
        // After the sequence: a memtable's tombstone list is current for every sequence we can see.
        RangeDel.FragmentedRangeTombstoneList? memTombstones = state.Mem.GetRangeTombstones();
        RangeDelAggregator? rangeDel = RangeDelAggregator.Create(state, cfd.Tables, sequence);
        Version v = state.Version;
        var children = new InternalIterator[1 + state.Immutable.Length + v.NumFiles(0) + CountNonEmptyLevels(v)];
        int n = 0;
        try
        {
            children[n++] = state.Mem.NewIterator();
            foreach (MemTable imm in state.Immutable)
            {
                children[n++] = imm.NewIterator();
            }
            foreach (Versions.FileMetaData f in v.Files(0))
            {
                children[n++] = cfd.Tables.Get(f, 0).NewIterator(verifyChecksums, fillCache, prefixFilter: prefixSeek != null);
            }
            for (int level = 1; level < Version.NumLevels; level++)
            {
                if (v.NumFiles(level) > 0)
                {
                    children[n++] = new LevelFiles(cfd.Tables, v.Files(level), verifyChecksums, fillCache, prefixSeek).CreateIterator();
                }
            }
        }
        catch
        {
            for (int i = 0; i < n; i++)
            {
                children[i].Dispose();
            }
            throw;
        }
        var merged = new MergingIterator(children, newestFirst: true); // memtable, immutables and level-0 files newest first, then levels 1..n
        var db = new DbIterator(merged, sequence, lower, upper, rangeDel, mergeOperator: cfd.Options.MergeOperator);
        return new PinnedIterator(cfd, db, state, rangeDel, memTombstones, verifyChecksums, fillCache, hasSnapshot) { PrefixSeek = prefixSeek };
    }

    private static int CountNonEmptyLevels(Version v)
    {
        int n = 0;
        for (int level = 1; level < Version.NumLevels; level++)
        {
            if (v.NumFiles(level) > 0)
            {
                n++;
            }
        }
        return n;
    }

    public Snapshot GetSnapshot()
    {
        ThrowIfDisposed();
        // Read under the list's lock, so a compaction that lists the snapshots either sees this one
        // or ran entirely before its sequence number was taken; and under the database mutex (as
        // RocksDB's GetSnapshotImpl), so an ingestion, which decides under it whether a snapshot
        // forces a new sequence number and installs its files before releasing it, sees this
        // snapshot or finishes before it is taken: a snapshot never watches ingested data appear.
        lock (_mutex)
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

    /// <summary>
    /// True when a memtable decided the lookup: <paramref name="type"/> is Value (written to
    /// <paramref name="value"/>), Deletion, or Merge (nothing written: the caller merges).
    /// <paramref name="covering"/> collects the newest visible range tombstone covering the key;
    /// a memtable whose tombstones cover it decides (every older source holds only older entries).
    /// </summary>
    private static bool TryGetFromMemTables(ReadState state, ReadOnlySpan<byte> key, ulong sequence, IBufferWriter<byte> value, ref ulong covering, out ValueType type)
    {
        if (TryGetFromMemTable(state.Mem, key, sequence, value, ref covering, out type))
        {
            return true;
        }
        foreach (MemTable imm in state.Immutable)
        {
            if (TryGetFromMemTable(imm, key, sequence, value, ref covering, out type))
            {
                return true;
            }
        }
        return false;
    }

    private static bool TryGetFromMemTable(MemTable mem, ReadOnlySpan<byte> key, ulong sequence, IBufferWriter<byte> value, ref ulong covering, out ValueType type)
    {
        if (mem.GetRangeTombstones() is { } tombstones)
        {
            covering = Math.Max(covering, tombstones.MaxCoveringSequence(key, sequence));
        }
        if (!mem.TryGet(key, sequence, out type, out ReadOnlySpan<byte> v, out ulong entrySequence))
        {
            type = ValueType.Deletion;
            return covering > 0;
        }
        if (entrySequence < covering)
        {
            type = ValueType.Deletion;
            return true;
        }
        if (type != ValueType.Merge && CheckType(type))
        {
            value.Write(v);
        }
        return true;
    }

    private static bool CheckType(ValueType type) => type switch
    {
        ValueType.Value => true,
        ValueType.Deletion or ValueType.SingleDeletion => false,
        _ => throw new KvCorruptionException($"Unexpected entry type {(int)type}."),
    };
}
