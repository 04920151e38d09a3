namespace KvEngine.Transactions;

/// <summary>
/// The sorted index of a <see cref="WriteBatchWithIndex"/> (RocksDB's WriteBatchEntrySkipList): a
/// skip list of <see cref="BatchIndexEntry"/> ordered by (column family, key bytewise, batch
/// offset). Keys are compared in the batch's representation, passed to every call. Backward
/// steps search from the head (O(log n)), as RocksDB's skip list does. Not thread-safe.
/// </summary>
internal sealed class BatchIndex
{
    private const int MaxHeight = 12;
    private readonly BatchIndexEntry _head = new(MaxHeight);
    private readonly BatchIndexEntry?[] _prev = new BatchIndexEntry?[MaxHeight];
    private int _height = 1;
    private uint _random = 0x2545F491;

    /// <summary>Entries in the index.</summary>
    public int Count { get; private set; }

    public void Clear()
    {
        Array.Clear(_head.Next);
        _height = 1;
        Count = 0;
    }

    /// <summary>Negative, zero or positive as <paramref name="e"/> sorts before, at or after (cf, key, offset).</summary>
    public static int Compare(BatchIndexEntry e, ReadOnlySpan<byte> rep, uint cf, ReadOnlySpan<byte> key, int offset)
    {
        if (e.ColumnFamily != cf)
        {
            return e.ColumnFamily < cf ? -1 : 1;
        }
        int c = e.Key(rep).SequenceCompareTo(key);
        return c != 0 ? c : e.Offset.CompareTo(offset);
    }

    /// <summary>Adds an entry (its position in the order must be free: offsets are unique).</summary>
    public void Insert(BatchIndexEntry entry, ReadOnlySpan<byte> rep)
    {
        BatchIndexEntry x = _head;
        for (int level = _height - 1; level >= 0; level--)
        {
            while (x.Next[level] is { } next && Compare(next, rep, entry.ColumnFamily, entry.Key(rep), entry.Offset) < 0)
            {
                x = next;
            }
            _prev[level] = x;
        }
        int height = entry.Next.Length;
        if (height > _height)
        {
            for (int level = _height; level < height; level++)
            {
                _prev[level] = _head;
            }
            _height = height;
        }
        for (int level = 0; level < height; level++)
        {
            entry.Next[level] = _prev[level]!.Next[level];
            _prev[level]!.Next[level] = entry;
        }
        Count++;
    }

    /// <summary>A new node of random height (p = 1/4, as RocksDB's skip list).</summary>
    public BatchIndexEntry NewEntry()
    {
        int height = 1;
        while (height < MaxHeight && (NextRandom() & 3) == 0)
        {
            height++;
        }
        return new BatchIndexEntry(height);
    }

    private uint NextRandom()
    {
        uint x = _random;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        _random = x;
        return x;
    }

    /// <summary>The first entry &gt;= (cf, key, offset), or null.</summary>
    public BatchIndexEntry? FindGreaterOrEqual(ReadOnlySpan<byte> rep, uint cf, ReadOnlySpan<byte> key, int offset)
    {
        BatchIndexEntry x = _head;
        for (int level = _height - 1; level >= 0; level--)
        {
            while (x.Next[level] is { } next && Compare(next, rep, cf, key, offset) < 0)
            {
                x = next;
            }
        }
        return x.Next[0];
    }

    /// <summary>The last entry &lt; (cf, key, offset), or null.</summary>
    public BatchIndexEntry? FindLessThan(ReadOnlySpan<byte> rep, uint cf, ReadOnlySpan<byte> key, int offset)
    {
        BatchIndexEntry x = _head;
        for (int level = _height - 1; level >= 0; level--)
        {
            while (x.Next[level] is { } next && Compare(next, rep, cf, key, offset) < 0)
            {
                x = next;
            }
        }
        return ReferenceEquals(x, _head) ? null : x;
    }

    /// <summary>The first entry of family <paramref name="cf"/>, or null.</summary>
    public BatchIndexEntry? First(ReadOnlySpan<byte> rep, uint cf)
    {
        BatchIndexEntry? e = FindGreaterOrEqual(rep, cf, default, int.MinValue);
        return e != null && e.ColumnFamily == cf ? e : null;
    }

    /// <summary>The last entry of family <paramref name="cf"/>, or null.</summary>
    public BatchIndexEntry? Last(uint cf)
    {
        BatchIndexEntry x = _head;
        for (int level = _height - 1; level >= 0; level--)
        {
            while (x.Next[level] is { } next && next.ColumnFamily <= cf)
            {
                x = next;
            }
        }
        return ReferenceEquals(x, _head) || x.ColumnFamily != cf ? null : x;
    }
}
