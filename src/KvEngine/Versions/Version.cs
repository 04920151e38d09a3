using KvEngine.Format;

namespace KvEngine.Versions;

/// <summary>
/// One immutable state of the LSM tree: the table files of each level. Level 0 files may overlap
/// and are kept newest first (largest sequence number, then file number, descending); files of
/// each deeper level are sorted by smallest key and do not overlap.
/// <para>
/// Thread-safety: immutable after construction. The reference count is atomic; when it reaches
/// zero the version leaves <see cref="VersionSet"/>'s live set, which lets its files be deleted.
/// </para>
/// </summary>
internal sealed class Version
{
    public const int NumLevels = 7;

    private static readonly byte[]?[] s_noCursors = new byte[NumLevels][];

    private readonly FileMetaData[][] _levels;
    private readonly byte[]?[] _compactCursors;
    private readonly VersionSet? _owner;
    private int _refs;
    private int _levelsWithoutRangeTombstones; // bit per level, set once every file is known to have none

    public Version(VersionSet? owner, FileMetaData[][] levels, byte[]?[]? compactCursors = null)
    {
        if (levels.Length != NumLevels)
        {
            throw new ArgumentException($"A version has {NumLevels} levels.", nameof(levels));
        }
        if (compactCursors != null && compactCursors.Length != NumLevels)
        {
            throw new ArgumentException($"A version has {NumLevels} compact cursors.", nameof(compactCursors));
        }
        _owner = owner;
        _levels = levels;
        _compactCursors = compactCursors ?? s_noCursors;
    }

    public static Version Empty(VersionSet? owner)
    {
        var levels = new FileMetaData[NumLevels][];
        for (int i = 0; i < NumLevels; i++)
        {
            levels[i] = Array.Empty<FileMetaData>();
        }
        return new Version(owner, levels);
    }

    public IReadOnlyList<FileMetaData> Files(int level) => _levels[level];

    /// <summary>The files of <paramref name="level"/> as the version holds them (sorted by key for levels 1+; never modified).</summary>
    internal FileMetaData[] LevelFiles(int level) => _levels[level];

    public int NumFiles(int level) => _levels[level].Length;

    /// <summary>
    /// Every file of <paramref name="level"/> is known to hold no range tombstone (each one's reader
    /// was opened: <see cref="FileMetaData.KnownToHaveNoRangeTombstones"/>), so an iterator needs no
    /// range-deletion check for it. False while some file is unopened or has tombstones. The answer
    /// true is cached (files never change within a version). Any thread.
    /// </summary>
    public bool LevelHasNoRangeTombstones(int level)
    {
        int bit = 1 << level;
        if ((Volatile.Read(ref _levelsWithoutRangeTombstones) & bit) != 0)
        {
            return true;
        }
        foreach (FileMetaData f in _levels[level])
        {
            if (!f.KnownToHaveNoRangeTombstones)
            {
                return false;
            }
        }
        Interlocked.Or(ref _levelsWithoutRangeTombstones, bit);
        return true;
    }

    /// <summary>One more than the deepest level holding a file; 0 for an empty version (RocksDB's num_non_empty_levels).</summary>
    public int NumNonEmptyLevels
    {
        get
        {
            for (int level = NumLevels - 1; level >= 0; level--)
            {
                if (_levels[level].Length > 0)
                {
                    return level + 1;
                }
            }
            return 0;
        }
    }

    /// <summary>
    /// The round-robin compact cursor of <paramref name="level"/> (an internal key; the next
    /// compaction of the level starts after it), or null. Kept in the MANIFEST (tag 5).
    /// </summary>
    public byte[]? CompactCursor(int level) => _compactCursors[level];

    public long LevelBytes(int level)
    {
        long sum = 0;
        foreach (FileMetaData f in _levels[level])
        {
            sum += (long)f.FileSize;
        }
        return sum;
    }

    public void Ref() => Interlocked.Increment(ref _refs);

    public void Unref()
    {
        int r = Interlocked.Decrement(ref _refs);
        if (r == 0)
        {
            _owner?.OnVersionReleased(this);
        }
        else if (r < 0)
        {
            throw new InvalidOperationException("Version released more often than referenced.");
        }
    }

    /// <summary>
    /// Appends to <paramref name="result"/> the files of <paramref name="level"/> whose user-key
    /// range intersects [<paramref name="begin"/>, <paramref name="end"/>] (user keys; null is
    /// unbounded). On level 0 the range grows to cover each file found, until no further file
    /// overlaps it, so that no older overlapping level-0 file is left out.
    /// </summary>
    public void GetOverlappingFiles(int level, byte[]? begin, byte[]? end, List<FileMetaData> result)
    {
        FileMetaData[] files = _levels[level];
        if (level > 0)
        {
            int i = begin == null ? 0 : FindFile(files, begin);
            for (; i < files.Length; i++)
            {
                if (end != null && InternalKeys.UserKey(files[i].Smallest).SequenceCompareTo(end) > 0)
                {
                    break;
                }
                result.Add(files[i]);
            }
            return;
        }
        int start = result.Count;
        bool restart = true;
        while (restart)
        {
            restart = false;
            result.RemoveRange(start, result.Count - start);
            foreach (FileMetaData f in files)
            {
                ReadOnlySpan<byte> fs = InternalKeys.UserKey(f.Smallest);
                ReadOnlySpan<byte> fl = InternalKeys.UserKey(f.Largest);
                if ((end != null && fs.SequenceCompareTo(end) > 0) || (begin != null && fl.SequenceCompareTo(begin) < 0))
                {
                    continue;
                }
                result.Add(f);
                if (begin != null && fs.SequenceCompareTo(begin) < 0)
                {
                    begin = fs.ToArray();
                    restart = true;
                }
                if (end != null && fl.SequenceCompareTo(end) > 0)
                {
                    end = fl.ToArray();
                    restart = true;
                }
                if (restart)
                {
                    break;
                }
            }
        }
    }

    /// <summary>True when some file of <paramref name="level"/> holds a user key in [smallest, largest].</summary>
    public bool OverlapInLevel(int level, ReadOnlySpan<byte> smallestUserKey, ReadOnlySpan<byte> largestUserKey)
    {
        FileMetaData[] files = _levels[level];
        if (level > 0)
        {
            int i = FindFile(files, smallestUserKey);
            return i < files.Length && InternalKeys.UserKey(files[i].Smallest).SequenceCompareTo(largestUserKey) <= 0;
        }
        foreach (FileMetaData f in files)
        {
            if (InternalKeys.UserKey(f.Smallest).SequenceCompareTo(largestUserKey) <= 0 &&
                InternalKeys.UserKey(f.Largest).SequenceCompareTo(smallestUserKey) >= 0)
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>
    /// Estimated bytes that the levels below <paramref name="level"/> hold in user keys
    /// [<paramref name="start"/>, <paramref name="end"/>) (RocksDB's ApproximateSize over those
    /// levels): whole files inside the range count fully, files crossing an end by their tables'
    /// approximate offsets. What a range tombstone at <paramref name="level"/> may delete.
    /// </summary>
    public ulong ApproximateBytesBelow(TableCache tables, int level, ReadOnlySpan<byte> start, ReadOnlySpan<byte> end) =>
        ApproximateBytes(tables, Math.Max(level + 1, 1), start, end);

    /// <summary>
    /// Estimated bytes that levels <paramref name="firstLevel"/> and below hold in user keys
    /// [<paramref name="start"/>, <paramref name="end"/>) (RocksDB's VersionSet::ApproximateSize):
    /// whole files inside the range count fully, files crossing an end by their tables'
    /// approximate offsets (exact to a data block), files outside not at all.
    /// </summary>
    public ulong ApproximateBytes(TableCache tables, int firstLevel, ReadOnlySpan<byte> start, ReadOnlySpan<byte> end)
    {
        ulong total = 0;
        for (int l = firstLevel; l < NumLevels; l++)
        {
            FileMetaData[] files = _levels[l];
            for (int i = l == 0 ? 0 : FindFile(files, start); i < files.Length; i++)
            {
                FileMetaData f = files[i];
                if (InternalKeys.UserKey(f.Smallest).SequenceCompareTo(end) >= 0)
                {
                    if (l == 0)
                    {
                        continue;
                    }
                    break; // a sorted level: every later file starts later still
                }
                if (InternalKeys.UserKey(f.Largest).SequenceCompareTo(start) < 0)
                {
                    continue; // level 0 only: sorted levels start at the first file reaching start
                }
                bool fromStart = InternalKeys.UserKey(f.Smallest).SequenceCompareTo(start) >= 0;
                bool toEnd = InternalKeys.UserKey(f.Largest).SequenceCompareTo(end) < 0;
                if (fromStart && toEnd)
                {
                    total += f.FileSize;
                    continue;
                }
                Table.TableReader reader = tables.Get(f, l);
                ulong from = fromStart ? 0 : reader.ApproximateOffsetOf(start);
                ulong to = toEnd ? f.FileSize : reader.ApproximateOffsetOf(end);
                total += to > from ? to - from : 0;
            }
        }
        return total;
    }

    /// <summary>Index of the first file whose largest user key is &gt;= <paramref name="userKey"/>.</summary>
    public static int FindFile(FileMetaData[] files, ReadOnlySpan<byte> userKey)
    {
        int lo = 0;
        int hi = files.Length;
        while (lo < hi)
        {
            int mid = (lo + hi) >>> 1;
            if (InternalKeys.UserKey(files[mid].Largest).SequenceCompareTo(userKey) < 0)
            {
                lo = mid + 1;
            }
            else
            {
                hi = mid;
            }
        }
        return lo;
    }
}
