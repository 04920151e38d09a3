using KvEngine.Compression;
using KvEngine.Format;
using KvEngine.Util;

namespace KvEngine.Table;

// IndexBlock := Block (see BlockBuilder) with value delta encoding, one entry per data block:
//   key   := separator: internal key (last <= sep < first of next block), or its user key alone
//            when no user key spans two blocks (rocksdb.index.key.is.user.key = 1)
//   value := BlockHandle of the data block (full at shared == 0, else varsigned64 size delta
//            from the previous handle; offset = previous offset + previous size + 5)

/// <summary>
/// RocksDB's ShortenedIndexBuilder for format_version 5: a single index block whose keys are
/// shortened separators. It keeps two builders in step, one with internal keys and one with user
/// keys, and finishes the user-key one unless some data block boundary split a user key.
/// Also the builder of each index partition of a <see cref="PartitionedIndexBuilder"/>, which may
/// force internal-key mode (<see cref="KeyPlusSeq"/>) when another partition needs it.
/// Not thread-safe; one per table builder (or partition).
/// </summary>
internal sealed class ShortenedIndexBuilder : IIndexBuilder
{
    private readonly BlockBuilder _withSeq;
    private readonly BlockBuilder _withoutSeq;
    private readonly IndexShortening _shortening;
    private readonly ByteBuffer _separator = new(64);
    private BlockHandle _lastHandle;
    private bool _hasLastHandle;
    private bool _keyPlusSeq;
    private int _indexSize;

    public ShortenedIndexBuilder(int restartInterval, IndexShortening shortening, bool keyPlusSeq = false)
    {
        _withSeq = new BlockBuilder(restartInterval, valueDeltaEncoding: true);
        _withoutSeq = new BlockBuilder(restartInterval, valueDeltaEncoding: true);
        _shortening = shortening;
        _keyPlusSeq = keyPlusSeq;
    }

    public int IndexSize => _indexSize;

    /// <summary>
    /// Separators are internal keys (some boundary split a user key). Set to true by a partitioned
    /// index before finishing a partition, so every partition of a table uses the same key form.
    /// </summary>
    public bool KeyPlusSeq
    {
        get => _keyPlusSeq;
        set => _keyPlusSeq |= value;
    }

    /// <summary>The separator (internal key) of the last entry added.</summary>
    public ReadOnlySpan<byte> LastSeparator => _separator.WrittenSpan;

    /// <summary>The block the finished index will come from, as things stand (for size-based partition cuts).</summary>
    public BlockBuilder CurrentBlock => _keyPlusSeq ? _withSeq : _withoutSeq;

    public int NumPartitions => 0;

    public int TopLevelIndexSize => 0;

    public bool IndexKeyIsUserKey => !_keyPlusSeq;

    public bool IndexValueIsDeltaEncoded => true;

    public IndexType IndexType => IndexType.BinarySearch;

    /// <summary>A single-level shortened index needs only the block boundaries, not every key.</summary>
    public void OnKeyAdded(ReadOnlySpan<byte> internalKey)
    {
    }

    public void AddIndexEntry(ReadOnlySpan<byte> lastKeyInBlock, bool hasNextBlock, ReadOnlySpan<byte> firstKeyInNextBlock, BlockHandle handle)
    {
        _separator.Clear();
        if (hasNextBlock)
        {
            if (_shortening == IndexShortening.None)
            {
                _separator.Append(lastKeyInBlock);
            }
            else
            {
                KeyShortening.InternalSeparator(lastKeyInBlock, firstKeyInNextBlock, _separator);
            }
            if (!_keyPlusSeq && InternalKeys.UserKey(lastKeyInBlock).SequenceEqual(InternalKeys.UserKey(firstKeyInNextBlock)))
            {
                _keyPlusSeq = true;
            }
        }
        else if (_shortening == IndexShortening.ShortenSeparatorsAndSuccessor)
        {
            KeyShortening.InternalSuccessor(lastKeyInBlock, _separator);
        }
        else
        {
            _separator.Append(lastKeyInBlock);
        }

        Span<byte> full = stackalloc byte[BlockHandle.MaxEncodedLength];
        int fullLength = handle.EncodeTo(full);
        Span<byte> delta = stackalloc byte[Coding.MaxVarint64Length];
        int deltaLength = 0;
        if (_hasLastHandle)
        {
            long d = (long)handle.Size - (long)_lastHandle.Size;
            deltaLength = Coding.EncodeVarint64(delta, (ulong)((d << 1) ^ (d >> 63)));
        }
        _lastHandle = handle;
        _hasLastHandle = true;

        ReadOnlySpan<byte> sep = _separator.WrittenSpan;
        _withSeq.Add(sep, full[..fullLength], delta[..deltaLength]);
        if (!_keyPlusSeq)
        {
            _withoutSeq.Add(InternalKeys.UserKey(sep), full[..fullLength], delta[..deltaLength]);
        }
    }

    /// <summary>The finished index block contents (uncompressed); valid until Dispose.</summary>
    public ReadOnlySpan<byte> FinishBlock()
    {
        ReadOnlySpan<byte> block = _keyPlusSeq ? _withSeq.Finish() : _withoutSeq.Finish();
        _indexSize = block.Length;
        return block;
    }

    public BlockHandle Finish(ITableBlockWriter writer, CompressionType compression) => writer.WriteBlock(FinishBlock(), compression);

    public void Dispose()
    {
        _withSeq.Dispose();
        _withoutSeq.Dispose();
        _separator.Dispose();
    }
}
