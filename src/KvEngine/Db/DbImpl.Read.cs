using System.Buffers;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Memtable;

using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Db;

/// <summary>The read path: point lookups and iterators, lock-free over a pinned read state.</summary>
internal sealed partial class DbImpl
{
    public bool TryGet(ReadOnlySpan<byte> key, IBufferWriter<byte> value, ReadOptions options)
    {
        ThrowIfDisposed();
        // The state first, then the sequence (as RocksDB does): compaction keeps the newest version
        // of every key as of any installed version, so nothing at or below the sequence that this
        // state holds has been dropped; writes that land in memtables newer than it are simply not
        // seen, as if the read happened when the state was pinned.
        ReadState state = AcquireReadState();
        KvStatistics? stats = _stats;
        stats?.Record(Ticker.NumberKeysRead);
        try
        {
            ulong sequence = ReadSequence(options);
            ulong covering = 0;
            if (TryGetFromMemTables(state, key, sequence, value, ref covering, out bool found))
            {
                stats?.Record(Ticker.MemtableHit);
            }
            else
            {
                stats?.Record(Ticker.MemtableMiss);
                found = state.Version.TryGet(_tables, key, sequence, value, options.VerifyChecksums, out ValueType type, out int level, options.FillCache, ref covering) &&
                    CheckType(type);
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

    public DbIterator NewIterator(ReadOptions options, out ReadState pinned)
    {
        ThrowIfDisposed();
        ReadState state = AcquireReadState();
        try
        {
            ulong sequence = ReadSequence(options);
            // After the sequence: a memtable's tombstone list is current for every sequence we can see.
            RangeDel.RangeDelAggregator? rangeDel = RangeDel.RangeDelAggregator.Create(state, _tables, sequence);
            Version v = state.Version;
            var children = new List<InternalIterator>(2 + state.Immutable.Length + v.NumFiles(0) + Version.NumLevels);
            children.Add(state.Mem.NewIterator());
            foreach (MemTable imm in state.Immutable)
            {
                children.Add(imm.NewIterator());
            }
            foreach (Manifest.FileMetaData f in v.Files(0))
            {
                children.Add(_tables.Get(f, 0).NewIterator(options.VerifyChecksums, options.FillCache));
            }
            for (int level = 1; level < Version.NumLevels; level++)
            {
                if (v.NumFiles(level) > 0)
                {
                    children.Add(new LevelFiles(_tables, v.Files(level), options.VerifyChecksums, options.FillCache).CreateIterator());
                }
            }
            var merged = new MergingIterator(children.ToArray());
            pinned = state;
            return new DbIterator(merged, sequence, options.IterateLowerBound, options.IterateUpperBound, rangeDel);
        }
        catch
        {
            state.Unref();
            throw;
        }
    }

    public void ReleaseReadState(ReadState state) => state.Unref();

    public Snapshot GetSnapshot()
    {
        ThrowIfDisposed();
        // Read under the list's lock, so a compaction that lists the snapshots either sees this one
        // or ran entirely before its sequence number was taken.
        return _snapshots.CreateAtLatest(_versions);
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
    /// True when a memtable decided the lookup (<paramref name="found"/> tells how).
    /// <paramref name="covering"/> collects the newest visible range tombstone covering the key;
    /// a memtable whose tombstones cover it decides (every older source holds only older entries).
    /// </summary>
    private static bool TryGetFromMemTables(ReadState state, ReadOnlySpan<byte> key, ulong sequence, IBufferWriter<byte> value, ref ulong covering, out bool found)
    {
        if (TryGetFromMemTable(state.Mem, key, sequence, value, ref covering, out found))
        {
            return true;
        }
        foreach (MemTable imm in state.Immutable)
        {
            if (TryGetFromMemTable(imm, key, sequence, value, ref covering, out found))
            {
                return true;
            }
        }
        return false;
    }

    private static bool TryGetFromMemTable(MemTable mem, ReadOnlySpan<byte> key, ulong sequence, IBufferWriter<byte> value, ref ulong covering, out bool found)
    {
        if (mem.GetRangeTombstones() is { } tombstones)
        {
            covering = Math.Max(covering, tombstones.MaxCoveringSequence(key, sequence));
        }
        if (!mem.TryGet(key, sequence, out ValueType type, out ReadOnlySpan<byte> v, out ulong entrySequence))
        {
            found = false;
            return covering > 0;
        }
        if (entrySequence < covering)
        {
            found = false;
            return true;
        }
        found = CheckType(type);
        if (found)
        {
            value.Write(v);
        }
        return true;
    }

    private static bool CheckType(ValueType type) => type switch
    {
        ValueType.Value => true,
        ValueType.Deletion or ValueType.SingleDeletion => false,
        ValueType.Merge => throw new KvException("The key holds merge operands; KvEngine has no merge operator."),
        _ => throw new KvCorruptionException($"Unexpected entry type {(int)type}."),
    };
}
