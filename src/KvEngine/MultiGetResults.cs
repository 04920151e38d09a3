using System.Buffers;
using KvEngine.Util;

namespace KvEngine;

/// <summary>
/// The results of one <see cref="KvDb.MultiGet(ReadOnlySpan{ReadOnlyMemory{byte}}, MultiGetResults, ReadOptions?)"/>
/// call, reusable across calls: result <c>i</c> belongs to key <c>i</c> of the call, in the
/// caller's order. Values live in one buffer the object owns (pooled, grown on demand and kept), so
/// a reused instance allocates nothing once it has grown to the batch's size.
/// <para>
/// Invariants: after a call, <see cref="Count"/> is the number of keys; a found key's value is the
/// slice (offset, length) of the value buffer; an absent key has none. Values read through
/// <see cref="TryGetValue"/> stay valid until the next MultiGet with this object or
/// <see cref="Dispose"/>. Not thread-safe: use one instance per thread (or per call).
/// </para>
/// </summary>
public sealed class MultiGetResults : IDisposable
{
    private ByteBuffer _values;
    private int[] _offsets;
    private int[] _lengths; // -1: absent
    private int _count;

    /// <summary>Creates an empty result set.</summary>
    /// <param name="initialKeyCapacity">Keys to size the per-key arrays for (grown on demand).</param>
    /// <param name="initialValueBytes">Value bytes to size the value buffer for (grown on demand).</param>
    public MultiGetResults(int initialKeyCapacity = 32, int initialValueBytes = 4096)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(initialKeyCapacity);
        ArgumentOutOfRangeException.ThrowIfNegative(initialValueBytes);
        _offsets = new int[Math.Max(1, initialKeyCapacity)];
        _lengths = new int[_offsets.Length];
        _values = new ByteBuffer(initialValueBytes);
    }

    /// <summary>Keys of the last MultiGet (0 before the first).</summary>
    public int Count => _count;

    /// <summary>True when key <paramref name="index"/> of the last MultiGet was found.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is not below <see cref="Count"/>.</exception>
    public bool IsFound(int index)
    {
        CheckIndex(index);
        return _lengths[index] >= 0;
    }

    /// <summary>
    /// The value of key <paramref name="index"/> of the last MultiGet: true and the value when it was
    /// found, false and an empty span otherwise. The span is valid until this object is used again.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is not below <see cref="Count"/>.</exception>
    public bool TryGetValue(int index, out ReadOnlySpan<byte> value)
    {
        CheckIndex(index);
        int length = _lengths[index];
        if (length < 0)
        {
            value = default;
            return false;
        }
        value = _values.WrittenSpan.Slice(_offsets[index], length);
        return true;
    }

    /// <summary>The value of key <paramref name="index"/> as a new array, or null when it was not found.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is not below <see cref="Count"/>.</exception>
    public byte[]? ToArray(int index) => TryGetValue(index, out ReadOnlySpan<byte> v) ? v.ToArray() : null;

    /// <summary>Returns the value buffer to the pool; the object must not be used afterwards.</summary>
    public void Dispose()
    {
        _count = 0;
        _values.Dispose();
    }

    private void CheckIndex(int index)
    {
        if ((uint)index >= (uint)_count)
        {
            throw new ArgumentOutOfRangeException(nameof(index), index, $"The last MultiGet had {_count} keys.");
        }
    }

    /// <summary>Where lookups append values (see <see cref="Begin"/>, <see cref="Complete"/>).</summary>
    internal IBufferWriter<byte> Writer => _values;

    /// <summary>Starts a call with <paramref name="count"/> keys, all absent.</summary>
    internal void Reset(int count)
    {
        if (_offsets.Length < count)
        {
            int size = Math.Max(count, _offsets.Length * 2);
            _offsets = new int[size];
            _lengths = new int[size];
        }
        _values.Clear();
        _lengths.AsSpan(0, count).Fill(-1);
        _count = count;
    }

    /// <summary>The offset the next value will start at.</summary>
    internal int Begin() => _values.Length;

    /// <summary>
    /// Ends the lookup of key <paramref name="index"/> that began at <paramref name="start"/>: found,
    /// its value is what was appended since; absent, anything appended is dropped.
    /// </summary>
    internal void Complete(int index, bool found, int start)
    {
        if (found)
        {
            _offsets[index] = start;
            _lengths[index] = _values.Length - start;
        }
        else
        {
            _values.Truncate(start);
            _lengths[index] = -1;
        }
    }

    /// <summary>Gives key <paramref name="to"/> the result of key <paramref name="from"/> (the same key twice in a call).</summary>
    internal void CopyResult(int from, int to)
    {
        _offsets[to] = _offsets[from];
        _lengths[to] = _lengths[from];
    }
}
