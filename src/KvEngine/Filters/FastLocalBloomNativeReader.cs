using KvEngine.Memory;
using KvEngine.Util;

namespace KvEngine.Filters;

/// <summary>
/// A FastLocalBloom filter held in native memory from a <see cref="NativeAllocator"/>: only the bit
/// array (whole 64-byte lines) is kept, its trailer's facts (probes, lines) live in fields, so the
/// allocation is exactly the bits and <see cref="MemoryUsage"/> is its usable size. Queries are
/// lock-free and allocation-free. Owns the buffer: <see cref="Dispose"/> frees it and must not race
/// with queries (the owner, e.g. the table reader, disposes after its last use).
/// <para>
/// Readers from <see cref="Rent"/> (filters loaded on block-cache misses) are recycled through
/// <see cref="ThreadLocalPool{T}"/> by their Dispose, so loading a filter creates no managed object
/// in steady state; such a reader has exactly one owner, and any use after its Dispose is a bug.
/// </para>
/// </summary>
internal sealed unsafe class FastLocalBloomNativeReader : IFilterBitsReader, IDisposable
{
    private NativeBuffer _bits;
    private byte* _pointer;
    private int _length;
    private uint _numLines;
    private int _numProbes;
    private int _disposed;
    private bool _recyclable;

    /// <param name="bits">Whole 64-byte lines (at least one), already filled; the reader takes ownership.</param>
    /// <param name="numProbes">Probes per key, 1..30.</param>
    public FastLocalBloomNativeReader(NativeBuffer bits, int numProbes)
    {
        Init(bits, numProbes);
    }

    private FastLocalBloomNativeReader()
    {
    }

    /// <summary>
    /// Like the constructor, but the object is a pooled one when this thread has one, and goes back
    /// to the pool on <see cref="Dispose"/>. On an invalid argument nothing is taken (the caller still owns <paramref name="bits"/>).
    /// </summary>
    public static FastLocalBloomNativeReader Rent(NativeBuffer bits, int numProbes)
    {
        Validate(bits, numProbes);
        FastLocalBloomNativeReader reader = ThreadLocalPool<FastLocalBloomNativeReader>.TryRent() ?? new FastLocalBloomNativeReader();
        reader.Init(bits, numProbes);
        reader._recyclable = true;
        return reader;
    }

    private static void Validate(NativeBuffer bits, int numProbes)
    {
        if (bits.Length < FastLocalBloomMath.CacheLineBytes || bits.Length % FastLocalBloomMath.CacheLineBytes != 0)
        {
            throw new ArgumentException($"A bit array of {bits.Length} bytes is not whole 64-byte lines.", nameof(bits));
        }
        ArgumentOutOfRangeException.ThrowIfLessThan(numProbes, 1);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(numProbes, 30);
    }

    private void Init(NativeBuffer bits, int numProbes)
    {
        Validate(bits, numProbes);
        _bits = bits;
        _pointer = bits.Pointer;
        _length = bits.Length;
        _numLines = (uint)(bits.Length / FastLocalBloomMath.CacheLineBytes);
        _numProbes = numProbes;
        _disposed = 0;
    }

    public int NumProbes => _numProbes;

    public int NumLines => (int)_numLines;

    /// <summary>Bytes of the bit array (the allocation's requested length).</summary>
    public int BitsLength => _length;

    /// <summary>Length of the filter block this reader represents (bits plus the 5-byte trailer).</summary>
    public long FilterBlockLength => _length + FastLocalBloomMath.MetadataLength;

    /// <summary>Memory charged for the filter: the usable size of its allocation.</summary>
    public long MemoryUsage => _bits.UsableSize;

    /// <summary>The bit array (checked against use after free when the allocator's debug checks are on).</summary>
    public ReadOnlySpan<byte> Bits => _bits.Span;

    public bool MayMatch(ReadOnlySpan<byte> key) => HashMayMatch(XxPh3.Hash64(key));

    /// <summary>Queries by a key's <see cref="XxPh3.Hash64(ReadOnlySpan{byte})"/> hash.</summary>
    public bool HashMayMatch(ulong hash)
    {
        byte* line = _pointer + FastLocalBloomImpl.LineOffset((uint)hash, _numLines);
        return FastLocalBloomImpl.HashMayMatchPrepared((uint)(hash >> 32), _numProbes, new ReadOnlySpan<byte>(line, FastLocalBloomMath.CacheLineBytes));
    }

    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            _bits.Dispose(); // the stale copy stays, so debug checks still catch a use after free
            if (_recyclable)
            {
                _recyclable = false;
                ThreadLocalPool<FastLocalBloomNativeReader>.Return(this);
            }
        }
    }
}
