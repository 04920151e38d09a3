using System.Collections;

namespace KvEngine.Merge;

/// <summary>
/// The operand stack of one user key (RocksDB's MergeContext): operands are copied into one
/// growing buffer as a lookup meets them, newest first (<see cref="PushOlder"/>, reads and
/// compaction) or oldest first (<see cref="PushNewer"/>, reverse iteration); the list view always
/// yields them oldest first, the order <see cref="KvMergeOperator"/> expects.
/// <para>
/// Invariants: every operand is a slice of <c>_buffer</c> recorded in <c>_slices</c> in push order;
/// slices handed out stay valid until <see cref="Clear"/> (a grown buffer copies, the old array
/// stays alive for slices already taken). Reused across lookups: steady state allocates nothing.
/// Not thread-safe.
/// </para>
/// </summary>
internal sealed class MergeContext : IReadOnlyList<ReadOnlyMemory<byte>>
{
    private byte[] _buffer;
    private int _used;
    private (int Offset, int Length)[] _slices = new (int, int)[8];
    private int _count;
    private bool _newestFirst = true;

    public MergeContext(int initialCapacity = 256)
    {
        _buffer = new byte[Math.Max(16, initialCapacity)];
    }

    /// <summary>Operands held.</summary>
    public int Count => _count;

    /// <summary>Operand <paramref name="index"/>, oldest first.</summary>
    public ReadOnlyMemory<byte> this[int index]
    {
        get
        {
            if ((uint)index >= (uint)_count)
            {
                throw new ArgumentOutOfRangeException(nameof(index));
            }
            (int offset, int length) = _slices[_newestFirst ? _count - 1 - index : index];
            return new ReadOnlyMemory<byte>(_buffer, offset, length);
        }
    }

    /// <summary>The newest operand.</summary>
    public ReadOnlySpan<byte> Newest => this[_count - 1].Span;

    /// <summary>Drops every operand; the next push fixes the order again.</summary>
    public void Clear()
    {
        _count = 0;
        _used = 0;
    }

    /// <summary>Adds an operand older than every one held (lookups walk newest to oldest).</summary>
    public void PushOlder(ReadOnlySpan<byte> operand) => Push(operand, newestFirst: true);

    /// <summary>Adds an operand newer than every one held (reverse iteration walks oldest to newest).</summary>
    public void PushNewer(ReadOnlySpan<byte> operand) => Push(operand, newestFirst: false);

    private void Push(ReadOnlySpan<byte> operand, bool newestFirst)
    {
        if (_count == 0)
        {
            _newestFirst = newestFirst;
        }
        else if (_newestFirst != newestFirst)
        {
            throw new InvalidOperationException("Operands must be pushed in one direction until the context is cleared.");
        }
        if (_buffer.Length - _used < operand.Length)
        {
            long wanted = Math.Max((long)_buffer.Length * 2, (long)_used + operand.Length);
            var grown = new byte[(int)Math.Min(wanted, Array.MaxLength)];
            _buffer.AsSpan(0, _used).CopyTo(grown);
            _buffer = grown;
        }
        operand.CopyTo(_buffer.AsSpan(_used));
        if (_count == _slices.Length)
        {
            Array.Resize(ref _slices, _slices.Length * 2);
        }
        _slices[_count++] = (_used, operand.Length);
        _used += operand.Length;
    }

    public IEnumerator<ReadOnlyMemory<byte>> GetEnumerator()
    {
        for (int i = 0; i < _count; i++)
        {
            yield return this[i];
        }
    }

    IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();
}
