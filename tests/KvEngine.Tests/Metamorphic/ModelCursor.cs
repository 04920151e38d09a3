using KvEngine.Tests.Db;

namespace KvEngine.Tests.Metamorphic;

/// <summary>
/// The model's iterator: a position in the sorted pairs of a family's state (as of the iterator's
/// creation or its snapshot) inside its bounds. Not thread-safe.
/// </summary>
internal sealed class ModelCursor : IMetaCursor
{
    private readonly List<KeyValuePair<byte[], byte[]>> _pairs;
    private int _pos = -1;

    public ModelCursor(List<KeyValuePair<byte[], byte[]>> pairs) => _pairs = pairs;

    public bool Valid => _pos >= 0 && _pos < _pairs.Count;

    public ReadOnlySpan<byte> Key => _pairs[_pos].Key;

    public ReadOnlySpan<byte> Value => _pairs[_pos].Value;

    public void Seek(byte[] target) => _pos = LowerBound(target);

    public void SeekForPrev(byte[] target)
    {
        int i = LowerBound(target);
        _pos = i < _pairs.Count && ByteArrayComparer.Instance.Compare(_pairs[i].Key, target) == 0 ? i : i - 1;
    }

    public void SeekToFirst() => _pos = 0;

    public void SeekToLast() => _pos = _pairs.Count - 1;

    public void Next() => _pos++;

    public void Prev() => _pos--;

    public void Dispose()
    {
    }

    // The first index whose key is >= target.
    private int LowerBound(byte[] target)
    {
        int lo = 0;
        int hi = _pairs.Count;
        while (lo < hi)
        {
            int mid = (lo + hi) >>> 1;
            if (ByteArrayComparer.Instance.Compare(_pairs[mid].Key, target) < 0)
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
