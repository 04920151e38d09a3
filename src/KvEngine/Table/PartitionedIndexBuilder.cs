using KvEngine.Compression;
using KvEngine.Format;
using KvEngine.Util;

namespace KvEngine.Table;

// TwoLevelIndex  := index_partition+ top_level_index          (written in this order, back to back)
// index_partition := IndexBlock (see ShortenedIndexBuilder): one entry per data block
// top_level_index := Block with value delta encoding, restart interval IndexBlockRestartInterval,
//                    one entry per partition, in partition order:
//   key   := the separator of the partition's last data block (the file's last key, or its
//            successor under ShortenSeparatorsAndSuccessor, for the last partition); its user key
//            alone when rocksdb.index.key.is.user.key = 1 (one decision for the whole file)
//   value := BlockHandle of the partition (full at restart points, else varsigned64 size delta)
// The footer's index handle points at top_level_index; the index has no metaindex entry.
// Partition cut (RocksDB's FlushBlockBySizePolicy on the partition's builder, checked before each
// new entry): size >= MetadataBlockSize, or (size > MetadataBlockSize * (100 - deviation) / 100,
// rounded up, and the size after this entry > MetadataBlockSize), or a filter partition asked
// for a cut (coupled partitioned filters).

/// <summary>
/// RocksDB's PartitionedIndexBuilder (index_type = kTwoLevelIndexSearch): data blocks are indexed
/// in <see cref="ShortenedIndexBuilder"/> partitions cut at about
/// <see cref="TableOptions.MetadataBlockSize"/>, and a top-level index maps each partition's last
/// separator to its handle. All partitions and the top level use internal-key separators when any
/// data block boundary split a user key, bare user keys otherwise. In coupled mode it tells the
/// <see cref="PartitionedFilterBlockBuilder"/> when to cut (<see cref="ShouldCutFilterBlock"/>) and
/// under which key (<see cref="PartitionKey"/>). Not thread-safe; one per table builder.
/// </summary>
internal sealed class PartitionedIndexBuilder : IIndexBuilder
{
    private readonly int _restartInterval;
    private readonly IndexShortening _shortening;
    private readonly int _metadataBlockSize;
    private readonly int _deviationLimit;
    private readonly List<(byte[] Key, ShortenedIndexBuilder Builder)> _partitions = [];
    private readonly ByteBuffer _subLastKey = new(64);
    private ShortenedIndexBuilder? _sub;
    private bool _keyPlusSeq;
    private bool _cutRequested;
    private bool _cutFilterBlock;
    private int _indexSize;
    private int _topLevelSize;
    private int _numPartitions;

    public PartitionedIndexBuilder(int restartInterval, IndexShortening shortening, int metadataBlockSize, int blockSizeDeviation)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(metadataBlockSize, 1);
        _restartInterval = restartInterval;
        _shortening = shortening;
        _metadataBlockSize = metadataBlockSize;
        _deviationLimit = DeviationLimit(metadataBlockSize, blockSizeDeviation);
    }

    public int IndexSize => _indexSize;

    public bool IndexKeyIsUserKey => !_keyPlusSeq;

    public bool IndexValueIsDeltaEncoded => true;

    public IndexType IndexType => IndexType.TwoLevelIndexSearch;

    public int NumPartitions => _numPartitions;

    public int TopLevelIndexSize => _topLevelSize;

    /// <summary>
    /// The key of the filter partition being cut in coupled mode: the separator of the data block
    /// indexed last (which is the last block whose keys the filter holds).
    /// </summary>
    public ReadOnlySpan<byte> PartitionKey => _subLastKey.WrittenSpan;

    /// <summary>RocksDB's size floor for "almost full": ceil(size * (100 - deviation) / 100); 0 disables it.</summary>
    public static int DeviationLimit(int size, int deviation) => (int)((((long)size * (100 - deviation)) + 99) / 100);

    /// <summary>A coupled filter partition is full: cut the index partition at the next data block boundary.</summary>
    public void RequestPartitionCut() => _cutRequested = true;

    /// <summary>True once after each index partition cut (coupled filters cut at the same time).</summary>
    public bool ShouldCutFilterBlock()
    {
        if (_cutFilterBlock)
        {
            _cutFilterBlock = false;
            return true;
        }
        return false;
    }

    /// <summary>A partitioned index needs only the block boundaries.</summary>
    public void OnKeyAdded(ReadOnlySpan<byte> internalKey)
    {
    }

    public void AddIndexEntry(ReadOnlySpan<byte> lastKeyInBlock, bool hasNextBlock, ReadOnlySpan<byte> firstKeyInNextBlock, BlockHandle handle)
    {
        if (_sub == null)
        {
            NewPartition();
        }
        if (!hasNextBlock)
        {
            _sub!.AddIndexEntry(lastKeyInBlock, false, default, handle);
            _keyPlusSeq |= _sub.KeyPlusSeq;
            _subLastKey.Clear();
            _subLastKey.Append(_sub.LastSeparator);
            _partitions.Add((_subLastKey.WrittenSpan.ToArray(), _sub));
            _sub = null;
            _cutFilterBlock = true;
            return;
        }
        // RocksDB checks its policy only on a non-empty partition (an empty one would be written
        // as an empty block when a filter asked for a cut before the first data block ended).
        if (!_sub!.CurrentBlock.IsEmpty && (_cutRequested || PartitionFull(lastKeyInBlock.Length, handle)))
        {
            _partitions.Add((_subLastKey.WrittenSpan.ToArray(), _sub));
            _cutFilterBlock = true;
            NewPartition();
        }
        _sub!.AddIndexEntry(lastKeyInBlock, true, firstKeyInNextBlock, handle);
        _subLastKey.Clear();
        _subLastKey.Append(_sub.LastSeparator);
        _keyPlusSeq |= _sub.KeyPlusSeq;
    }

    public BlockHandle Finish(ITableBlockWriter writer, CompressionType compression)
    {
        if (_sub != null)
        {
            throw new InvalidOperationException("The last index entry was not added.");
        }
        _numPartitions = _partitions.Count;
        using var top = new BlockBuilder(_restartInterval, valueDeltaEncoding: true);
        Span<byte> full = stackalloc byte[BlockHandle.MaxEncodedLength];
        Span<byte> delta = stackalloc byte[Coding.MaxVarint64Length];
        BlockHandle last = default;
        int size = 0;
        for (int i = 0; i < _partitions.Count; i++)
        {
            (byte[] key, ShortenedIndexBuilder builder) = _partitions[i];
            builder.KeyPlusSeq = _keyPlusSeq;
            ReadOnlySpan<byte> block = builder.FinishBlock();
            size += block.Length;
            BlockHandle handle = writer.WriteBlock(block, compression);
            int fullLength = handle.EncodeTo(full);
            long d = (long)handle.Size - (long)last.Size;
            int deltaLength = Coding.EncodeVarint64(delta, (ulong)((d << 1) ^ (d >> 63)));
            last = handle;
            top.Add(_keyPlusSeq ? key : InternalKeys.UserKey(key), full[..fullLength], delta[..deltaLength]);
        }
        ReadOnlySpan<byte> topBlock = top.Finish();
        _topLevelSize = topBlock.Length;
        _indexSize = size + topBlock.Length;
        return writer.WriteBlock(topBlock, compression);
    }

    public void Dispose()
    {
        _sub?.Dispose();
        foreach ((byte[] _, ShortenedIndexBuilder builder) in _partitions)
        {
            builder.Dispose();
        }
        _partitions.Clear();
        _subLastKey.Dispose();
    }

    private void NewPartition()
    {
        _sub = new ShortenedIndexBuilder(_restartInterval, _shortening, _keyPlusSeq);
        _cutRequested = false;
    }

    /// <summary>
    /// RocksDB's FlushBlockBySizePolicy::Update for the next entry (full internal key, full
    /// handle), measured on the block the partition will be finished from. (RocksDB fixes the
    /// measured block when the partition starts, so a partition whose keys switch to internal keys
    /// midway stops growing in its eyes and is never cut by size; we follow the switch.)
    /// </summary>
    private bool PartitionFull(int keyLength, BlockHandle handle)
    {
        BlockBuilder block = _sub!.CurrentBlock;
        if (block.IsEmpty)
        {
            return false;
        }
        int current = block.CurrentSizeEstimate;
        if (current >= _metadataBlockSize)
        {
            return true;
        }
        if (_deviationLimit == 0)
        {
            return false;
        }
        Span<byte> encoded = stackalloc byte[BlockHandle.MaxEncodedLength];
        int valueLength = handle.EncodeTo(encoded);
        return block.EstimateSizeAfterKV(keyLength, valueLength) > _metadataBlockSize && current > _deviationLimit;
    }
}
