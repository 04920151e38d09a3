using KvEngine.Tests.Db;
using KvEngine.Tests.RangeDel;

namespace KvEngine.Tests.Metamorphic;

/// <summary>
/// The in-memory model of a metamorphic run: one sorted dictionary per family holding each live
/// key's current value (merges applied at once with the log's operator), a copy of all of them per
/// snapshot. Range deletions of an ingested file cover only what was there before it (they share
/// the file's sequence number), so they apply before its points. Flush, compaction and reopen
/// change nothing. Not thread-safe.
/// </summary>
internal sealed class MetaModel : IMetaTarget
{
    private static readonly byte[] s_comma = [(byte)','];
    private readonly bool _uint64Add;
    private readonly SortedDictionary<byte[], byte[]>[] _data;
    private readonly Dictionary<int, SortedDictionary<byte[], byte[]>[]> _snapshots = new();

    public MetaModel(MetaLog log)
    {
        _uint64Add = log.UInt64Add;
        _data = new SortedDictionary<byte[], byte[]>[log.Families];
        for (int f = 0; f < _data.Length; f++)
        {
            _data[f] = new SortedDictionary<byte[], byte[]>(ByteArrayComparer.Instance);
        }
    }

    private MetaModel(bool uint64Add, SortedDictionary<byte[], byte[]>[] data)
    {
        _uint64Add = uint64Add;
        _data = data;
    }

    public int Families => _data.Length;

    public bool ConfinesPrefixes => false;

    public void Write(MetaOp op)
    {
        if (op.Kind == MetaOpKind.Batch)
        {
            foreach (MetaOp r in op.Records!)
            {
                Apply(r);
            }
        }
        else
        {
            Apply(op);
        }
    }

    public void Ingest(MetaOp op)
    {
        foreach (MetaOp r in op.Records!)
        {
            if (r.Kind == MetaOpKind.DeleteRange)
            {
                Apply(r);
            }
        }
        foreach (MetaOp r in op.Records)
        {
            if (r.Kind != MetaOpKind.DeleteRange)
            {
                Apply(r);
            }
        }
    }

    public void TakeSnapshot(int id) => _snapshots.Add(id, Copy(_data));

    public void ReleaseSnapshot(int id) => _snapshots.Remove(id);

    public byte[]? Get(int family, byte[] key, int snapshot) => State(snapshot)[family].GetValueOrDefault(key);

    public byte[]?[] MultiGet(int family, IReadOnlyList<byte[]> keys, int snapshot)
    {
        var values = new byte[]?[keys.Count];
        for (int i = 0; i < keys.Count; i++)
        {
            values[i] = Get(family, keys[i], snapshot);
        }
        return values;
    }

    public IMetaCursor NewCursor(int family, int snapshot, byte[]? lower, byte[]? upper, bool prefixMode)
    {
        var pairs = new List<KeyValuePair<byte[], byte[]>>();
        foreach (KeyValuePair<byte[], byte[]> e in State(snapshot)[family])
        {
            if ((lower == null || ByteArrayComparer.Instance.Compare(e.Key, lower) >= 0) &&
                (upper == null || ByteArrayComparer.Instance.Compare(e.Key, upper) < 0))
            {
                pairs.Add(e);
            }
        }
        return new ModelCursor(pairs);
    }

    public void Flush(int family)
    {
    }

    public void Compact(int family, byte[]? begin, byte[]? end)
    {
    }

    public void Reopen() => _snapshots.Clear();

    public IMetaReader Checkpoint() => new MetaModel(_uint64Add, Copy(_data));

    public void Dispose()
    {
    }

    private SortedDictionary<byte[], byte[]>[] State(int snapshot) =>
        snapshot < 0 ? _data : _snapshots.TryGetValue(snapshot, out SortedDictionary<byte[], byte[]>[]? s) ? s : throw new InvalidOperationException($"no snapshot s{snapshot}");

    private void Apply(MetaOp r)
    {
        SortedDictionary<byte[], byte[]> d = _data[r.Family];
        byte[] key = MetaValues.Key(r.Key!);
        switch (r.Kind)
        {
            case MetaOpKind.Put:
                d[key] = MetaValues.Value(r.Value!);
                break;
            case MetaOpKind.Merge:
                d[key] = Merge(d.GetValueOrDefault(key), MetaValues.Value(r.Value!));
                break;
            case MetaOpKind.Delete:
            case MetaOpKind.SingleDelete:
                d.Remove(key);
                break;
            case MetaOpKind.DeleteRange:
                RangeDelModelTests.RemoveRange(d, key, MetaValues.Key(r.End!));
                break;
            default:
                throw new InvalidOperationException(r.ToString());
        }
    }

    private byte[] Merge(byte[]? existing, byte[] operand)
    {
        if (_uint64Add)
        {
            return UInt64AddOperator.Encode(unchecked(UInt64AddOperator.Decode(existing) + UInt64AddOperator.Decode(operand)));
        }
        return existing == null ? operand : [.. existing, .. s_comma, .. operand];
    }

    private static SortedDictionary<byte[], byte[]>[] Copy(SortedDictionary<byte[], byte[]>[] data)
    {
        var copy = new SortedDictionary<byte[], byte[]>[data.Length];
        for (int f = 0; f < data.Length; f++)
        {
            copy[f] = new SortedDictionary<byte[], byte[]>(data[f], ByteArrayComparer.Instance);
        }
        return copy;
    }
}
