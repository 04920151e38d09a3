using KvEngine.Format;
using KvEngine.Iterators;

namespace KvEngine.Tests.Iterators;

/// <summary>
/// Test source: an immutable sorted in-memory list of internal key/value pairs (InternalKeyComparer
/// order; the input may be unsorted but must not repeat a key). Moves allocate nothing.
/// </summary>
internal sealed class VectorIterator : InternalIterator
{
    private readonly byte[][] _keys;
    private readonly byte[][] _values;
    private int _pos = -1;

    public VectorIterator(IEnumerable<(byte[] Key, byte[] Value)> entries)
    {
        var list = entries.ToList();
        list.Sort((a, b) => InternalKeyComparer.Compare(a.Key, b.Key));
        for (int i = 1; i < list.Count; i++)
        {
            if (InternalKeyComparer.Compare(list[i - 1].Key, list[i].Key) == 0)
            {
                throw new ArgumentException("duplicate internal key in one VectorIterator");
            }
        }
        _keys = list.Select(e => e.Key).ToArray();
        _values = list.Select(e => e.Value).ToArray();
    }

    public bool Disposed { get; private set; }

    public int Count => _keys.Length;

    public override bool Valid => _pos >= 0 && _pos < _keys.Length;

    public override ReadOnlySpan<byte> Key => Valid ? _keys[_pos] : throw new InvalidOperationException("not valid");

    public override ReadOnlySpan<byte> Value => Valid ? _values[_pos] : throw new InvalidOperationException("not valid");

    public override void SeekToFirst() => _pos = 0;

    public override void SeekToLast() => _pos = _keys.Length - 1;

    public override void Seek(ReadOnlySpan<byte> target)
    {
        int lo = 0;
        int hi = _keys.Length;
        while (lo < hi)
        {
            int mid = (lo + hi) / 2;
            if (InternalKeyComparer.Compare(_keys[mid], target) < 0)
            {
                lo = mid + 1;
            }
            else
            {
                hi = mid;
            }
        }
        _pos = lo;
    }

    public override void SeekForPrev(ReadOnlySpan<byte> target)
    {
        int lo = 0;
        int hi = _keys.Length;
        while (lo < hi)
        {
            int mid = (lo + hi) / 2;
            if (InternalKeyComparer.Compare(_keys[mid], target) <= 0)
            {
                lo = mid + 1;
            }
            else
            {
                hi = mid;
            }
        }
        _pos = lo - 1;
    }

    public override void Next()
    {
        Assert.True(Valid, "Next on an invalid VectorIterator");
        _pos++;
    }

    public override void Prev()
    {
        Assert.True(Valid, "Prev on an invalid VectorIterator");
        _pos--;
    }

    protected override void Dispose(bool disposing)
    {
        Assert.False(Disposed, "VectorIterator disposed twice");
        Disposed = true;
    }
}
