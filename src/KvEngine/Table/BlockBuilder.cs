using KvEngine.Util;

namespace KvEngine.Table;

// Block    := entry* restart: fixed32[num_restarts] hash_index? footer: fixed32
// entry    := shared: varint32 non_shared: varint32 value_length: varint32
//             key_delta: byte[non_shared] value: byte[value_length]
// footer   := num_restarts | (1 << 31 when hash_index follows the restarts)
// Keys are prefix-compressed against the previous key (shared bytes); every restart_interval-th
// entry is a restart point with shared = 0, and restart[] holds those entries' offsets.
// hash_index (data blocks with kDataBlockBinaryAndHash only; at most 253 restarts and 64 KiB):
//   bucket: u8[num_buckets] num_buckets: fixed16   (grammar and bucket math in DataBlockHashIndex.cs)
//
// With value delta encoding (index blocks, format_version >= 4) value_length is omitted:
// entry    := shared: varint32 non_shared: varint32 key_delta: byte[non_shared] value
//   value  := BlockHandle                       when shared == 0
//           | size_delta: varsigned64           otherwise; offset = previous offset + previous size + 5
//             (the delta form is written only for entries whose key shares bytes with the previous one)

/// <summary>
/// Builds one block (data, index, metaindex, properties, range-deletion). Keys must be added in
/// the block's order; the builder does not check it (the table builder does). Not thread-safe.
/// After <see cref="Finish"/> the block bytes stay valid until <see cref="Reset"/> or the next Add.
/// </summary>
internal sealed class BlockBuilder : IDisposable
{
    private readonly int _restartInterval;
    private readonly bool _valueDeltaEncoding;
    /// <summary>Capacity the block buffer keeps across <see cref="Reset"/>; a larger (native) one is freed.</summary>
    internal const int RetainedCapacity = 4 << 20;

    private readonly ByteBuffer _buffer = new(4096, spillToNative: true); // index blocks reach megabytes
    private readonly ByteBuffer _lastKey = new(64);
    private readonly ByteBuffer _restarts = new(64, spillToNative: true); // fixed32 offsets; an index block has one per data block
    private readonly DataBlockHashIndexBuilder? _hash;
    private int _counter;
    private int _entries;
    private bool _finished;

    /// <summary>
    /// A builder whose blocks restart every <paramref name="restartInterval"/> entries; with
    /// <paramref name="hashUtilRatio"/> &gt; 0 (data blocks of internal keys only) each block also
    /// carries RocksDB's data-block hash index at that utilization ratio where it can
    /// (<see cref="DataBlockHashIndex"/>).
    /// </summary>
    public BlockBuilder(int restartInterval, bool valueDeltaEncoding = false, double hashUtilRatio = 0)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(restartInterval, 1);
        _restartInterval = restartInterval;
        _valueDeltaEncoding = valueDeltaEncoding;
        if (hashUtilRatio > 0)
        {
            _hash = new DataBlockHashIndexBuilder(hashUtilRatio);
        }
        Reset();
    }

    public bool IsEmpty => _entries == 0;

    public int EntryCount => _entries;

    public ReadOnlySpan<byte> LastKey => _lastKey.WrittenSpan;

    /// <summary>Size of the block if it were finished now.</summary>
    public int CurrentSizeEstimate => _finished ? _buffer.Length : _buffer.Length + _restarts.Length + 4 + (_hash?.EstimatedSize ?? 0);

    public void Reset()
    {
        if (_buffer.Capacity > RetainedCapacity)
        {
            _buffer.ReleaseLarge(); // a block that held a large value: its native buffer goes back now
        }
        _buffer.Clear();
        _lastKey.Clear();
        _restarts.Clear();
        _restarts.AppendFixed32(0);
        _counter = 0;
        _entries = 0;
        _finished = false;
        _hash?.Reset();
    }

    /// <summary>
    /// Appends an entry. With value delta encoding, <paramref name="deltaValue"/> is written instead
    /// of <paramref name="value"/> when the key shares a prefix with the previous key.
    /// </summary>
    public void Add(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, ReadOnlySpan<byte> deltaValue = default)
    {
        if (_finished)
        {
            throw new InvalidOperationException("Block already finished; call Reset first.");
        }
        int shared = 0;
        if (_counter >= _restartInterval)
        {
            _restarts.AppendFixed32((uint)_buffer.Length);
            _counter = 0;
        }
        else if (_entries > 0)
        {
            shared = key.CommonPrefixLength(_lastKey.WrittenSpan);
        }
        bool useDelta = _valueDeltaEncoding && shared != 0;
        ReadOnlySpan<byte> delta = key[shared..];
        ReadOnlySpan<byte> written = useDelta ? deltaValue : value;
        // One reservation for the whole entry (three varints at most, the key delta, the value):
        // a flush adds every memtable entry here.
        long need = (3L * Coding.MaxVarint32Length) + delta.Length + written.Length;
        if (need > Array.MaxLength)
        {
            throw new InvalidOperationException("A block entry cannot exceed Array.MaxLength bytes.");
        }
        Span<byte> dst = _buffer.GetSpan((int)need);
        int n = Coding.EncodeVarint32(dst, (uint)shared);
        n += Coding.EncodeVarint32(dst[n..], (uint)delta.Length); // non-shared
        if (!_valueDeltaEncoding)
        {
            n += Coding.EncodeVarint32(dst[n..], (uint)value.Length);
        }
        delta.CopyTo(dst[n..]);
        n += delta.Length;
        written.CopyTo(dst[n..]);
        _buffer.Advance(n + written.Length);

        _lastKey.Truncate(shared);
        _lastKey.Append(delta);
        _hash?.Add(key, (_restarts.Length / sizeof(uint)) - 1);
        _counter++;
        _entries++;
    }

    /// <summary>RocksDB's EstimateSizeAfterKV: the block size after adding this entry (approximate).</summary>
    public int EstimateSizeAfterKV(int keyLength, int valueLength)
    {
        bool restart = _counter >= _restartInterval;
        long estimate = CurrentSizeEstimate + keyLength;
        estimate += !_valueDeltaEncoding || restart ? valueLength : valueLength / 2;
        if (restart)
        {
            estimate += 4;
        }
        estimate += 4 + Coding.VarintLength((ulong)keyLength);
        if (!_valueDeltaEncoding || restart)
        {
            estimate += Coding.VarintLength((ulong)valueLength);
        }
        return (int)Math.Min(estimate, int.MaxValue);
    }

    /// <summary>Appends the restart array (and the hash index, when the block takes one) and returns the finished block.</summary>
    public ReadOnlySpan<byte> Finish()
    {
        if (!_finished)
        {
            bool withHash = _hash is { Valid: true } && CurrentSizeEstimate <= DataBlockHashIndex.MaxBlockSize;
            uint footer = (uint)(_restarts.Length / sizeof(uint));
            _buffer.Append(_restarts.WrittenSpan);
            if (withHash)
            {
                _hash!.Finish(_buffer);
                footer |= DataBlockHashIndex.FooterFlag;
            }
            _buffer.AppendFixed32(footer);
            _finished = true;
        }
        return _buffer.WrittenSpan;
    }

    public void Dispose()
    {
        _buffer.Dispose();
        _lastKey.Dispose();
        _restarts.Dispose();
    }
}
