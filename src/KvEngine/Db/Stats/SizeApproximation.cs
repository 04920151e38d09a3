using KvEngine.Db.State;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Memtable;
using KvEngine.Versions;

using ValueType = KvEngine.Format.ValueType;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Db.Stats;

/// <summary>
/// GetApproximateSizes and GetApproximateMemTableStats (RocksDB's DBImpl::GetApproximateSizes with
/// VersionSet::ApproximateSize): for each range, the bytes of the tables it overlaps (a table inside
/// the range counts whole; one it cuts counts from the data block of its start to that of its
/// limit, found through the index), plus, when asked, the bytes of its memtable entries; and
/// RocksDB's estimate-live-data-size.
/// <para>
/// Thread-safety: stateless; any thread. Works on a pinned read state, no lock.
/// </para>
/// </summary>
internal static class SizeApproximation
{
    /// <summary>Refuses what GetApproximateSizes cannot answer: no ranges, a range without keys or backwards, flags asking for nothing.</summary>
    public static void CheckArguments(IReadOnlyList<KeyRange> ranges, SizeApproximationFlags flags)
    {
        ArgumentNullException.ThrowIfNull(ranges);
        if ((flags & (SizeApproximationFlags.IncludeFiles | SizeApproximationFlags.IncludeMemtables)) == 0)
        {
            throw new ArgumentException("GetApproximateSizes needs IncludeFiles, IncludeMemtables or both.", nameof(flags));
        }
        for (int i = 0; i < ranges.Count; i++)
        {
            CheckRange(ranges[i]);
        }
    }

    /// <summary>The approximate bytes of each of <paramref name="ranges"/> in <paramref name="cfd"/> (arguments checked by <see cref="CheckArguments"/>).</summary>
    public static long[] GetApproximateSizes(ColumnFamilyData cfd, IReadOnlyList<KeyRange> ranges, SizeApproximationFlags flags)
    {
        var sizes = new long[ranges.Count];
        ReadState state = cfd.AcquireReadState();
        try
        {
            for (int i = 0; i < ranges.Count; i++)
            {
                byte[] start = SeekKey(ranges[i].Start);
                byte[] limit = SeekKey(ranges[i].Limit);
                long size = 0;
                if ((flags & SizeApproximationFlags.IncludeFiles) != 0)
                {
                    size += (long)state.Version.ApproximateBytes(cfd.Tables, 0, ranges[i].Start, ranges[i].Limit);
                }
                if ((flags & SizeApproximationFlags.IncludeMemtables) != 0)
                {
                    MemTableStats(state, start, limit, out _, out long bytes);
                    size += bytes;
                }
                sizes[i] = size;
            }
        }
        finally
        {
            state.Unref();
        }
        return sizes;
    }

    /// <summary>The entries of <paramref name="cfd"/>'s memtables in <paramref name="range"/> (checked by <see cref="CheckRange"/>) and their bytes.</summary>
    public static void GetApproximateMemTableStats(ColumnFamilyData cfd, KeyRange range, out long count, out long size)
    {
        ReadState state = cfd.AcquireReadState();
        try
        {
            MemTableStats(state, SeekKey(range.Start), SeekKey(range.Limit), out count, out size);
        }
        finally
        {
            state.Unref();
        }
    }

    /// <summary>Refuses a range without keys or whose limit sorts before its start.</summary>
    public static void CheckRange(KeyRange range)
    {
        if (range.Start is null || range.Limit is null)
        {
            throw new ArgumentException("A range needs a start and a limit key.", nameof(range));
        }
        if (range.Start.AsSpan().SequenceCompareTo(range.Limit) > 0)
        {
            throw new ArgumentException("A range's limit sorts before its start.", nameof(range));
        }
    }

    // The first internal key of user key k: every entry of k sorts at or after it.
    private static byte[] SeekKey(byte[] userKey) => InternalKeys.Create(userKey, InternalKeys.MaxSequenceNumber, ValueType.ValueTypeForSeek);

    // Entries of the memtables in [start, limit), and their key and value bytes. Exact (RocksDB
    // estimates from the skip list's shape); costs a walk of the entries in the range.
    private static void MemTableStats(ReadState state, byte[] start, byte[] limit, out long count, out long size)
    {
        count = 0;
        size = 0;
        Count(state.Mem, start, limit, ref count, ref size);
        foreach (MemTable m in state.Immutable)
        {
            Count(m, start, limit, ref count, ref size);
        }
    }

    private static void Count(MemTable mem, byte[] start, byte[] limit, ref long count, ref long size)
    {
        if (mem.IsEmpty)
        {
            return;
        }
        using InternalIterator it = mem.NewIterator();
        for (it.Seek(start); it.Valid && InternalKeyComparer.Compare(it.Key, limit) < 0; it.Next())
        {
            count++;
            size += it.Key.Length + it.Value.Length;
        }
    }

    /// <summary>
    /// RocksDB's estimate-live-data-size (VersionStorageInfo::EstimateLiveDataSize): from the
    /// bottom level up, the bytes of each table whose key range no table counted before overlaps
    /// (newer data over a range counted below is taken to replace it).
    /// </summary>
    public static long EstimateLiveDataSize(Version v)
    {
        var ranges = new SortedList<byte[], FileMetaData>(Comparer<byte[]>.Create(static (a, b) => InternalKeyComparer.Compare(a, b)));
        long size = 0;
        for (int level = Version.NumLevels - 1; level >= 0; level--)
        {
            foreach (FileMetaData file in v.Files(level))
            {
                int lb = LowerBound(ranges.Keys, file.Smallest);
                if (lb == ranges.Count || InternalKeyComparer.Compare(file.Largest, ranges.Values[lb].Smallest) < 0)
                {
                    if (!ranges.ContainsKey(file.Largest))
                    {
                        ranges.Add(file.Largest, file);
                    }
                    size += (long)file.FileSize;
                }
            }
        }
        return size;
    }

    private static int LowerBound(IList<byte[]> keys, byte[] target)
    {
        int lo = 0;
        int hi = keys.Count;
        while (lo < hi)
        {
            int mid = (lo + hi) >>> 1;
            if (InternalKeyComparer.Compare(keys[mid], target) < 0)
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
