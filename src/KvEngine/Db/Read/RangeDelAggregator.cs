using KvEngine.Db.State;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.RangeDel;
using KvEngine.Versions;

namespace KvEngine.Db.Read;

/// <summary>
/// The range tombstones one iterator reads through, at its read sequence (RocksDB's
/// ReadRangeDelAggregator): one source per child of the iterator's merging iterator, in the same
/// order (mutable memtable, immutable memtables newest first, level-0 files newest first, then one
/// per sorted level). A memtable or level-0 source is a fragmented list; a level source finds the
/// file holding the key (the file the level iterator reads there) and uses that table's list,
/// clipped to the file's boundaries by the table cache.
/// <para>
/// An entry is deleted when some source has a visible tombstone (sequence &lt;= read sequence)
/// covering its user key with a larger sequence than the entry's. The first such source in child
/// order is remembered for <see cref="TryGetLastCover"/>: entries of later children are older than
/// the tombstone (newer sources hold newer data for overlapping keys, and a file's tombstones act
/// only within its own boundaries), so they can be skipped to the fragment's end.
/// </para>
/// Allocation-free per query (each level source caches the file of its last lookup). Not
/// thread-safe: one iterator's.
/// </summary>
internal sealed class RangeDelAggregator : IRangeDelAggregator
{
    private readonly Source[] _sources;
    private readonly TableCache? _tables;
    private ulong _readSequence;
    private FragmentedRangeTombstoneList? _lastList;
    private int _lastFragment = -1;
    private int _lastChild = -1;

    private RangeDelAggregator(Source[] sources, TableCache? tables, ulong readSequence)
    {
        _sources = sources;
        _tables = tables;
        _readSequence = readSequence;
    }

    /// <summary>
    /// An aggregator over <paramref name="state"/> as the database's iterator merges it, or null
    /// when no source can hold a tombstone visible at <paramref name="readSequence"/> (no memtable or
    /// level-0 tombstones, and no sorted level with a table not known to be free of them). Opens the
    /// level-0 tables (the iterator opens them anyway).
    /// </summary>
    public static RangeDelAggregator? Create(ReadState state, TableCache tables, ulong readSequence)
    {
        var sources = new List<Source>();
        int child = 0;
        AddList(sources, state.Mem.GetRangeTombstones(), child++);
        foreach (Memtable.MemTable imm in state.Immutable)
        {
            AddList(sources, imm.GetRangeTombstones(), child++);
        }
        Versions.Version v = state.Version;
        foreach (FileMetaData f in v.Files(0))
        {
            AddList(sources, tables.Get(f, 0).RangeTombstones, child++);
        }
        for (int level = 1; level < Versions.Version.NumLevels; level++)
        {
            if (v.NumFiles(level) > 0)
            {
                // A level whose every table is known to hold no tombstone needs no per-key lookup
                // (it still has its child: the children's numbering follows the merging iterator's).
                if (!v.LevelHasNoRangeTombstones(level))
                {
                    sources.Add(new Source { Files = v.LevelFiles(level), Child = child, CachedFile = -1 });
                }
                child++;
            }
        }
        return sources.Count == 0 ? null : new RangeDelAggregator(sources.ToArray(), tables, readSequence);
    }

    /// <summary>Reads at <paramref name="readSequence"/> from now on (the sources are unchanged: the caller checked they are still current).</summary>
    public void Reset(ulong readSequence)
    {
        _readSequence = readSequence;
        _lastList = null;
        _lastFragment = -1;
        _lastChild = -1;
    }

    public bool ShouldDelete(ReadOnlySpan<byte> internalKey)
    {
        ReadOnlySpan<byte> userKey = InternalKeys.UserKey(internalKey);
        ulong sequence = InternalKeys.Sequence(internalKey);
        for (int s = 0; s < _sources.Length; s++)
        {
            FragmentedRangeTombstoneList? list = ListFor(ref _sources[s], userKey);
            if (list is null)
            {
                continue;
            }
            int fragment = list.FragmentContaining(userKey);
            if (fragment >= 0 && list.VisibleSequence(fragment, _readSequence) > sequence)
            {
                _lastList = list;
                _lastFragment = fragment;
                _lastChild = _sources[s].Child;
                return true;
            }
        }
        _lastList = null;
        return false;
    }

    public bool TryGetLastCover(out int child, out ReadOnlySpan<byte> start, out ReadOnlySpan<byte> end)
    {
        if (_lastList is null)
        {
            child = -1;
            start = default;
            end = default;
            return false;
        }
        child = _lastChild;
        start = _lastList.Start(_lastFragment);
        end = _lastList.End(_lastFragment);
        return true;
    }

    private static void AddList(List<Source> sources, FragmentedRangeTombstoneList? list, int child)
    {
        if (list is { IsEmpty: false })
        {
            sources.Add(new Source { List = list, Child = child, CachedFile = -1 });
        }
    }

    private FragmentedRangeTombstoneList? ListFor(ref Source source, ReadOnlySpan<byte> userKey)
    {
        if (source.Files is null)
        {
            return source.List;
        }
        FileMetaData[] files = source.Files;
        if (source.CachedFile >= 0 && FileBounds.Contains(files[source.CachedFile], userKey))
        {
            return source.List;
        }
        int i = Versions.Version.FindFile(files, userKey);
        if (i < files.Length && !FileBounds.Contains(files[i], userKey))
        {
            i++; // the first candidate ended at the key exclusively (a sentinel): try the next file
        }
        if (i >= files.Length || !FileBounds.Contains(files[i], userKey))
        {
            return null;
        }
        source.CachedFile = i;
        source.List = _tables!.Get(files[i]).RangeTombstones;
        return source.List;
    }

    /// <summary>One child's tombstones: a fixed list, or a sorted level's files (with the last file looked up).</summary>
    private struct Source
    {
        public FragmentedRangeTombstoneList? List;
        public FileMetaData[]? Files;
        public int Child;
        public int CachedFile;
    }
}
