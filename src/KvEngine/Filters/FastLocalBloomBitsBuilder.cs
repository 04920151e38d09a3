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
/// key's is counted once. Adding keys does not allocate per key: the first
/// <see cref="ChunkHashes"/> hashes live in a pooled array (reused across
/// <see cref="Finish(IBufferWriter{byte})"/> calls), the rest in native chunks of as many hashes
/// (64 KiB) from <see cref="NativeAllocator.Shared"/>, freed when the filter is finished. Like the
/// deque of RocksDB's builder, chunks are never copied or doubled: a whole-table filter of a
/// 64 MiB memtable's flush (~420,000 hashes, 3.4 MB) holds at most one chunk more than it uses,
/// where a doubling buffer held 4 MiB and, while growing, 6 MiB. (As managed arrays, every table
/// built once left ~32 MiB of doubling steps on the large-object heap until a full collection, which
/// made KvEngine's peak RSS at 10M keys grow past RocksDB's.)
/// <code>
/// hash i := i &lt; ChunkHashes ? _hashes[i] : _chunks[(i >> ChunkShift) - 1][i &amp; (ChunkHashes - 1)]
/// </code>
/// With a <see cref="FilterMemoryOptimizer"/> the default size gives way to one whose bit array
/// fills an allocator size class exactly, and the probe count follows the final bits per key.
/// <para>
/// Presized (<see cref="TryPresize"/>, a flush that knows how many user keys its memtable holds):
/// the bit array of a filter for that many keys is allocated up front and each hash sets its bits
/// as it is added, so no hash is kept. The filter is the one the buffered path writes for that key
/// count; when fewer keys arrive (keys the flush dropped), it is that much larger and sharper. A
/// count that runs high only costs size; one that ran low would raise the false-positive rate,
/// never lose a key.
/// </para>
/// Not thread-safe; one builder per filter being written. <see cref="Dispose"/> returns the buffer.
/// </summary>
internal sealed class FastLocalBloomBitsBuilder : IFilterBitsBuilder
{
    private const int InitialCapacity = 256;

    /// <summary>Hashes per chunk (and in the pooled array at most): 64 KiB of them.</summary>
    public const int ChunkHashes = 1 << ChunkShift;

    private const int ChunkShift = 13;

    private readonly int _millibitsPerKey;
    private readonly FilterMemoryOptimizer? _optimizer;

    private ulong[] _hashes; // hashes [0, ChunkHashes): the pooled array (grows by doubling up to ChunkHashes)
    private NativeBuffer[] _chunks = []; // chunk k holds hashes [(k + 1) * ChunkHashes, +ChunkHashes); their one owner
    private int _chunkCount; // chunks allocated (the table keeps its length across filters)
    private unsafe ulong* _tail; // the newest chunk (null while the pooled array holds every hash)
    private int _capacity; // hashes the storage holds now
    private int _count;
    private ulong _last; // the last hash added (valid when _count > 0)
    private NativeBuffer _direct; // presized: the bit array hashes are set into (its one owner); unallocated otherwise
    private uint _directLines;
    private int _directProbes;
    private PendingHashes _pending; // presized: the last hashes added, set once their lines were prefetched
    private bool _disposed;

    /// <param name="millibitsPerKey">Target density in thousandths of a bit per key (at least 1000).</param>
    /// <param name="optimizer">Sizes filters to fill size classes (optimize_filters_for_memory); null for RocksDB's default sizing.</param>
    public FastLocalBloomBitsBuilder(int millibitsPerKey, FilterMemoryOptimizer? optimizer = null)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(millibitsPerKey, 1000);
        _millibitsPerKey = millibitsPerKey;
        _optimizer = optimizer;
        _hashes = BoundedArrayPool<ulong>.Rent(InitialCapacity);
        _capacity = Math.Min(_hashes.Length, ChunkHashes);
    }

    public int MillibitsPerKey => _millibitsPerKey;

    public int KeyCount => _count;

    /// <summary>Bytes the hashes' storage holds now (the pooled array and the native chunks).</summary>
    public long BufferBytes => ((long)_hashes.Length + ((long)_chunkCount * ChunkHashes)) * sizeof(ulong);

    public void AddKey(ReadOnlySpan<byte> key) => AddHash(XxPh3.Hash64(key));

    /// <summary>Adds a key by its <see cref="XxPh3.Hash64(ReadOnlySpan{byte})"/> hash.</summary>
    public unsafe void AddHash(ulong hash)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        if (_count > 0 && _last == hash)
        {
            return;
        }
        if (_direct.IsAllocated)
        {
            // As AddAll: a hash's line is prefetched now and its bits set PendingHashes.Length adds later.
            int slot = _count & (PendingHashes.Length - 1);
            if (_count >= PendingHashes.Length)
            {
                SetDirect(_pending[slot]);
            }
            _pending[slot] = hash;
            _ = Prepare((byte*)_direct.RawPointer, (uint)hash, _directLines);
            _count++;
            _last = hash;
            return;
        }
        if (_count == _capacity)
        {
            Grow();
        }
        if (_count < ChunkHashes)
        {
            _hashes[_count] = hash;
        }
        else
        {
            _tail[_count & (ChunkHashes - 1)] = hash;
        }
        _count++;
        _last = hash;
    }

    /// <summary>
    /// Sizes the filter for <paramref name="expectedKeys"/> keys before the first is added and sets
    /// each key's bits as it comes (see the type's comment). False, and nothing changed, when keys
    /// were already added, the count is not positive, or the filter would not fit one allocation.
    /// </summary>
    public unsafe bool TryPresize(long expectedKeys)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        if (_count != 0 || _direct.IsAllocated || expectedKeys <= 0 || expectedKeys > int.MaxValue)
        {
            return false;
        }
        long bitsLength = _optimizer == null
            ? FastLocalBloomMath.CalculateSpace(expectedKeys, _millibitsPerKey) - FastLocalBloomMath.MetadataLength
            : _optimizer.ChooseBitsLength(expectedKeys, _millibitsPerKey);
        if (bitsLength <= 0 || bitsLength > Math.Min(SizeClasses.MaxSize, Array.MaxLength - FastLocalBloomMath.MetadataLength))
        {
            return false;
        }
        _directProbes = _optimizer != null
            ? FastLocalBloomMath.NumProbesForSize(expectedKeys, bitsLength + FastLocalBloomMath.MetadataLength)
            : FastLocalBloomMath.ChooseNumProbes(_millibitsPerKey);
        _direct = NativeAllocator.Shared.Allocate((int)bitsLength, zeroed: true, NativeUse.FilterBuild);
        _directLines = (uint)(bitsLength / FastLocalBloomMath.CacheLineBytes);
        return true;
    }

    /// <summary>True while the filter is presized (<see cref="TryPresize"/>) and not yet finished.</summary>
    public bool IsPresized => _direct.IsAllocated;

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
        if (IsPresized)
        {
            FinishPresized(output);
            return;
        }
        if (_optimizer == null)
        {
            Finish(output, CalculateSpace(), probesFromActualSize: false);
        }
        else
        {
            Finish(output, ChooseBitsLength() + FastLocalBloomMath.MetadataLength, probesFromActualSize: true);
        }
    }

    /// <summary>Writes the presized bit array and its trailer (or, when no key came, the empty filter) and resets.</summary>
    private unsafe void FinishPresized(IBufferWriter<byte> output)
    {
        ArgumentNullException.ThrowIfNull(output);
        if (_count == 0)
        {
            Reset();
            Finish(output, FastLocalBloomMath.CalculateSpace(0, _millibitsPerKey), probesFromActualSize: false);
            return;
        }
        for (int i = Math.Max(0, _count - PendingHashes.Length); i < _count; i++)
        {
            SetDirect(_pending[i & (PendingHashes.Length - 1)]);
        }
        int len = (int)(_directLines * FastLocalBloomMath.CacheLineBytes);
        int length = len + FastLocalBloomMath.MetadataLength;
        Span<byte> block = output.GetSpan(length).Slice(0, length);
        new ReadOnlySpan<byte>(_direct.RawPointer, len).CopyTo(block);
        WriteTrailer(block, len, _directProbes);
        output.Advance(length);
        Reset();
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
        ThrowIfPresized();
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
        ThrowIfPresized();
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
        WriteTrailer(block, len, numProbes);
        output.Advance(length);
        Reset();
    }

    /// <summary>The 5-byte trailer after <paramref name="len"/> bytes of lines (see the grammar at the top).</summary>
    private static void WriteTrailer(Span<byte> block, int len, int numProbes)
    {
        block[len] = FilterTrailer.NewBloomMarker;
        block[len + 1] = FilterTrailer.FastLocalBloomSubImpl;
        block[len + 2] = (byte)numProbes;
        block[len + 3] = 0;
        block[len + 4] = 0;
    }

    /// <summary>Sets one hash's probe bits in the presized bit array.</summary>
    private unsafe void SetDirect(ulong hash) =>
        SetProbes((byte*)_direct.RawPointer + FastLocalBloomImpl.LineOffset((uint)hash, _directLines), (uint)(hash >> 32), _directProbes);

    /// <summary>The last hashes added to a presized filter whose bits are not set yet (a power of two of them).</summary>
    [System.Runtime.CompilerServices.InlineArray(Length)]
    private struct PendingHashes
    {
        public const int Length = 8;

        private ulong _first;
    }

    private void ThrowIfPresized()
    {
        if (_direct.IsAllocated)
        {
            throw new InvalidOperationException("A presized filter is finished at the size it was given.");
        }
    }

    /// <summary>Forgets the hashes, frees the native chunks and a presized bit array (the pooled array stays for the next filter).</summary>
    private unsafe void Reset()
    {
        _count = 0;
        NativeBuffer direct = _direct;
        _direct = default;
        direct.Dispose(); // nothing when not presized
        for (int k = 0; k < _chunkCount; k++)
        {
            NativeBuffer chunk = _chunks[k];
            _chunks[k] = default;
            chunk.Dispose();
        }
        _chunkCount = 0;
        _tail = null;
        _capacity = Math.Min(_hashes.Length, ChunkHashes);
    }

    /// <summary>
    /// Hash <paramref name="i"/> (below <see cref="KeyCount"/>): see the type's comment. Reads the
    /// chunks' raw pointers: this builder owns them and frees them only in <see cref="Reset"/>, so the
    /// allocator's per-access liveness check would only cost the filter loop a call per hash.
    /// </summary>
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.AggressiveInlining)]
    private unsafe ulong HashAt(int i) =>
        i < ChunkHashes ? _hashes[i] : ((ulong*)_chunks[(i >> ChunkShift) - 1].RawPointer)[i & (ChunkHashes - 1)];

    /// <summary>
    /// Sets every added hash's probe bits in <paramref name="bits"/> (whole lines, zeroed). Like
    /// RocksDB's AddAllEntries, lines are located (and prefetched) eight hashes ahead of the one
    /// being set, so large filters overlap their cache misses.
    /// </summary>
    private unsafe void AddAll(Span<byte> bits, int numProbes)
    {
        const int Ahead = PendingHashes.Length; // the presized path's distance too
        uint numLines = (uint)(bits.Length / FastLocalBloomMath.CacheLineBytes);
        int n = _count;
        int* offsets = stackalloc int[Ahead];
        fixed (byte* data = bits)
        {
            int primed = Math.Min(Ahead, n);
            for (int i = 0; i < primed; i++)
            {
                offsets[i] = Prepare(data, (uint)HashAt(i), numLines);
            }
            for (int i = 0; i < n; i++)
            {
                int slot = i & (Ahead - 1);
                SetProbes(data + offsets[slot], (uint)(HashAt(i) >> 32), numProbes);
                if (i + Ahead < n)
                {
                    offsets[slot] = Prepare(data, (uint)HashAt(i + Ahead), numLines);
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

    /// <summary>Room for one more hash: a doubled pooled array below <see cref="ChunkHashes"/>, else one more chunk.</summary>
    private unsafe void Grow()
    {
        if (_count < ChunkHashes)
        {
            ulong[] bigger = BoundedArrayPool<ulong>.Rent(Math.Min(_capacity * 2, ChunkHashes));
            _hashes.AsSpan(0, _count).CopyTo(bigger);
            BoundedArrayPool<ulong>.Return(_hashes);
            _hashes = bigger;
            _capacity = Math.Min(bigger.Length, ChunkHashes);
            return;
        }
        if ((long)_capacity + ChunkHashes > int.MaxValue)
        {
            throw new InvalidOperationException("Too many keys for one filter.");
        }
        if (_chunkCount == _chunks.Length)
        {
            Array.Resize(ref _chunks, Math.Max(8, _chunks.Length * 2));
        }
        NativeBuffer chunk = NativeAllocator.Shared.Allocate(ChunkHashes * sizeof(ulong), use: NativeUse.FilterBuild);
        _chunks[_chunkCount++] = chunk;
        _tail = (ulong*)chunk.Pointer;
        _capacity += ChunkHashes;
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
