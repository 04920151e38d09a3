using KvEngine.Util;
using System.Buffers;
using System.Runtime.Intrinsics.X86;
using KvEngine.Memory;

namespace KvEngine.Filters;

// FastLocalBloom filter block (RocksDB format_version 5 full filter):
//   filter   := lines: line[numLines] trailer
//   line     := 64 bytes (512 bits; a key's probes all land in one line)
//   trailer  := 0xFF (new-Bloom marker) 0x00 (FastLocalBloom) probes: byte (low 5 bits; top 3 bits
//               0 = 64-byte lines) 0x00 0x00 (reserved)
// A filter of zero keys is the trailer alone (5 bytes).

/// <summary>
/// Collects the XXPH3 hashes of a filter's keys and writes a FastLocalBloom filter block
/// bit-identical to RocksDB 7.8's FastLocalBloomBitsBuilder. A key whose hash equals the previous
/// key's is counted once. Hashes live in a growable buffer, so adding keys does not allocate per
/// key: a pooled array up to <see cref="BoundedArrayPool{T}.PooledLimitBytes"/> (reused across
/// <see cref="Finish(IBufferWriter{byte})"/> calls), beyond it native memory from
/// <see cref="NativeAllocator.Shared"/> (page mappings for the large sizes), freed when the filter is
/// finished. A whole-table filter of a 64 MiB table holds about a million hashes (8 MiB, 16 MiB of
/// capacity after doubling); as managed arrays every table built left ~32 MiB of doubling steps on
/// the large-object heap until a full collection, which at 10M keys kept ~100 MiB of dead arrays in
/// the resident set (docs/benchmarks.md, "Memory at 10M keys").
/// With a <see cref="FilterMemoryOptimizer"/> the default size gives way to one whose bit array
/// fills an allocator size class exactly, and the probe count follows the final bits per key.
/// Not thread-safe; one builder per filter being written. <see cref="Dispose"/> returns the buffer.
/// </summary>
internal sealed class FastLocalBloomBitsBuilder : IFilterBitsBuilder
{
    private const int InitialCapacity = 256;

    private readonly int _millibitsPerKey;
    private readonly FilterMemoryOptimizer? _optimizer;
    private static readonly int s_pooledCapacity = BoundedArrayPool<ulong>.PooledLimitBytes / sizeof(ulong);

    private ulong[] _hashes; // the pooled array; its hashes are the live ones unless _large is allocated
    private NativeBuffer _large; // native hashes past the pooled capacity; its one owner
    private unsafe ulong* _largeData;
    private int _capacity;
    private int _count;
    private bool _disposed;

    /// <param name="millibitsPerKey">Target density in thousandths of a bit per key (at least 1000).</param>
    /// <param name="optimizer">Sizes filters to fill size classes (optimize_filters_for_memory); null for RocksDB's default sizing.</param>
    public FastLocalBloomBitsBuilder(int millibitsPerKey, FilterMemoryOptimizer? optimizer = null)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(millibitsPerKey, 1000);
        _millibitsPerKey = millibitsPerKey;
        _optimizer = optimizer;
        _hashes = BoundedArrayPool<ulong>.Rent(InitialCapacity);
        _capacity = _hashes.Length;
    }

    public int MillibitsPerKey => _millibitsPerKey;

    public int KeyCount => _count;

    /// <summary>The hashes added since the last finish, in order (valid until the next add or finish).</summary>
    public unsafe ReadOnlySpan<ulong> Hashes => _large.IsAllocated ? new ReadOnlySpan<ulong>(_largeData, _count) : _hashes.AsSpan(0, _count);

    /// <summary>Bytes the hash buffer holds now (pooled array or native block).</summary>
    public long BufferBytes => _large.IsAllocated ? _large.UsableSize : (long)_hashes.Length * sizeof(ulong);

    public void AddKey(ReadOnlySpan<byte> key) => AddHash(XxPh3.Hash64(key));

    /// <summary>Adds a key by its <see cref="XxPh3.Hash64(ReadOnlySpan{byte})"/> hash.</summary>
    public unsafe void AddHash(ulong hash)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        if (_large.IsAllocated)
        {
            if (_largeData[_count - 1] == hash)
            {
                return;
            }
            if (_count == _capacity)
            {
                Grow();
            }
            _largeData[_count++] = hash;
            return;
        }
        if (_count > 0 && _hashes[_count - 1] == hash)
        {
            return;
        }
        if (_count == _capacity)
        {
            Grow();
            if (_large.IsAllocated)
            {
                _largeData[_count++] = hash;
                return;
            }
        }
        _hashes[_count++] = hash;
    }

    /// <summary>The length, trailer included, that <see cref="Finish(IBufferWriter{byte})"/> would write now.</summary>
    public long CalculateSpace() => FastLocalBloomMath.CalculateSpace(_count, _millibitsPerKey);

    /// <summary>Probe count RocksDB writes for the configured density.</summary>
    public int NumProbes => FastLocalBloomMath.ChooseNumProbes(_millibitsPerKey);

    public bool OptimizesForMemory => _optimizer != null;

    /// <summary>
    /// Writes the filter and resets: at RocksDB's default size (<see cref="CalculateSpace"/>), or,
    /// with an optimizer, at the size it picks (probes then follow the final size).
    /// </summary>
    public void Finish(IBufferWriter<byte> output)
    {
        if (_optimizer == null)
        {
            Finish(output, CalculateSpace(), probesFromActualSize: false);
        }
        else
        {
            Finish(output, ChooseBitsLength() + FastLocalBloomMath.MetadataLength, probesFromActualSize: true);
        }
    }

    /// <summary>
    /// Builds the filter straight into native memory from <paramref name="allocator"/> (the bit array
    /// alone, sized as <see cref="Finish(IBufferWriter{byte})"/> would) and resets. Returns the reader
    /// that owns it, or null when no key was added (the filter would be its trailer alone).
    /// </summary>
    public FastLocalBloomNativeReader? FinishInMemory(NativeAllocator allocator)
    {
        ArgumentNullException.ThrowIfNull(allocator);
        ObjectDisposedException.ThrowIf(_disposed, this);
        long bitsLength = _optimizer == null ? CalculateSpace() - FastLocalBloomMath.MetadataLength : ChooseBitsLength();
        if (bitsLength == 0)
        {
            Reset();
            return null;
        }
        if (bitsLength > SizeClasses.MaxSize)
        {
            throw new ArgumentOutOfRangeException(nameof(allocator), bitsLength, "Filter is larger than one allocation can hold.");
        }
        long lenWithMetadata = bitsLength + FastLocalBloomMath.MetadataLength;
        int numProbes = _optimizer != null
            ? FastLocalBloomMath.NumProbesForSize(_count, lenWithMetadata)
            : FastLocalBloomMath.ChooseNumProbes(_millibitsPerKey);
        NativeBuffer bits = allocator.Allocate((int)bitsLength, zeroed: true, NativeUse.Filter);
        try
        {
            AddAll(bits.Span, numProbes);
            Reset();
            return new FastLocalBloomNativeReader(bits, numProbes);
        }
        catch
        {
            bits.Dispose();
            throw;
        }
    }

    private long ChooseBitsLength() => _optimizer!.ChooseBitsLength(_count, _millibitsPerKey);

    /// <summary>
    /// Writes the filter at a caller-chosen size and resets. <paramref name="lenWithMetadata"/> must be
    /// whole 64-byte lines plus the 5-byte trailer (see <see cref="FastLocalBloomMath.RoundDownUsableSpace"/>).
    /// With <paramref name="probesFromActualSize"/> the probe count follows the bits per key the final
    /// size gives (RocksDB's optimize_filters_for_memory); otherwise the configured density's.
    /// </summary>
    public void Finish(IBufferWriter<byte> output, long lenWithMetadata, bool probesFromActualSize)
    {
        ArgumentNullException.ThrowIfNull(output);
        ObjectDisposedException.ThrowIf(_disposed, this);
        ArgumentOutOfRangeException.ThrowIfLessThan(lenWithMetadata, FastLocalBloomMath.MetadataLength);
        long bitsLength = lenWithMetadata - FastLocalBloomMath.MetadataLength;
        if (bitsLength % FastLocalBloomMath.CacheLineBytes != 0)
        {
            throw new ArgumentException(
                $"Filter length {lenWithMetadata} is not whole 64-byte lines plus the 5-byte trailer.",
                nameof(lenWithMetadata));
        }
        if (lenWithMetadata > Array.MaxLength)
        {
            throw new ArgumentOutOfRangeException(nameof(lenWithMetadata), lenWithMetadata,
                "Filter is larger than one buffer can hold; use partitioned filters.");
        }

        int numProbes = probesFromActualSize
            ? FastLocalBloomMath.NumProbesForSize(_count, lenWithMetadata)
            : FastLocalBloomMath.ChooseNumProbes(_millibitsPerKey);
        int length = (int)lenWithMetadata;
        int len = (int)bitsLength;
        Span<byte> block = output.GetSpan(length).Slice(0, length);
        block.Clear();
        if (len > 0)
        {
            AddAll(block.Slice(0, len), numProbes);
        }
        block[len] = FilterTrailer.NewBloomMarker;
        block[len + 1] = FilterTrailer.FastLocalBloomSubImpl;
        block[len + 2] = (byte)numProbes;
        output.Advance(length);
        Reset();
    }

    /// <summary>Forgets the hashes and frees a native buffer (the pooled array stays for the next filter).</summary>
    private unsafe void Reset()
    {
        _count = 0;
        if (_large.IsAllocated)
        {
            NativeBuffer large = _large;
            _large = default;
            _largeData = null;
            _capacity = _hashes.Length;
            large.Dispose();
        }
    }

    /// <summary>
    /// Sets every added hash's probe bits in <paramref name="bits"/> (whole lines, zeroed). Like
    /// RocksDB's AddAllEntries, lines are located (and prefetched) eight hashes ahead of the one
    /// being set, so large filters overlap their cache misses.
    /// </summary>
    private unsafe void AddAll(Span<byte> bits, int numProbes)
    {
        const int Ahead = 8;
        uint numLines = (uint)(bits.Length / FastLocalBloomMath.CacheLineBytes);
        ReadOnlySpan<ulong> hashes = Hashes;
        int n = hashes.Length;
        int* offsets = stackalloc int[Ahead];
        fixed (byte* data = bits)
        fixed (ulong* h = hashes)
        {
            int primed = Math.Min(Ahead, n);
            for (int i = 0; i < primed; i++)
            {
                offsets[i] = Prepare(data, (uint)h[i], numLines);
            }
            for (int i = 0; i < n; i++)
            {
                int slot = i & (Ahead - 1);
                SetProbes(data + offsets[slot], (uint)(h[i] >> 32), numProbes);
                if (i + Ahead < n)
                {
                    offsets[slot] = Prepare(data, (uint)h[i + Ahead], numLines);
                }
            }
        }
    }

    private static unsafe int Prepare(byte* data, uint h1, uint numLines)
    {
        int offset = FastLocalBloomImpl.LineOffset(h1, numLines);
        if (Sse.IsSupported)
        {
            Sse.Prefetch0(data + offset);
        }
        return offset;
    }

    /// <summary>FastLocalBloomImpl.AddHashPrepared over a raw 64-byte line.</summary>
    private static unsafe void SetProbes(byte* line, uint h2, int numProbes)
    {
        for (int p = 0; p < numProbes; p++, h2 *= FastLocalBloomImpl.ProbeMultiplier)
        {
            uint bit = h2 >> 23;
            line[bit >> 3] |= (byte)(1 << (int)(bit & 7));
        }
    }

    private unsafe void Grow()
    {
        if (_capacity < s_pooledCapacity)
        {
            int want = Math.Min(_capacity * 2, s_pooledCapacity);
            ulong[] bigger = BoundedArrayPool<ulong>.Rent(want);
            _hashes.AsSpan(0, _count).CopyTo(bigger);
            BoundedArrayPool<ulong>.Return(_hashes);
            _hashes = bigger;
            _capacity = Math.Min(bigger.Length, s_pooledCapacity);
            return;
        }
        long wantBytes = (long)_capacity * 2 * sizeof(ulong);
        if (wantBytes > SizeClasses.MaxSize)
        {
            throw new InvalidOperationException("Too many keys for one filter.");
        }
        NativeBuffer grown = NativeAllocator.Shared.Allocate((int)wantBytes, use: NativeUse.FilterBuild);
        ulong* data = (ulong*)grown.Pointer;
        Hashes.CopyTo(new Span<ulong>(data, _count));
        NativeBuffer old = _large;
        _large = grown;
        _largeData = data;
        _capacity = grown.UsableSize / sizeof(ulong);
        old.Dispose();
    }

    public void Dispose()
    {
        if (_disposed)
        {
            return;
        }
        _disposed = true;
        Reset();
        ulong[] hashes = _hashes;
        _hashes = [];
        _capacity = 0;
        BoundedArrayPool<ulong>.Return(hashes);
    }
}
