using KvEngine.Compression;
using KvEngine.Filters;
using KvEngine.Format;
using KvEngine.Util;

namespace KvEngine.Table;

// PartitionedFilter := filter_partition+ top_level_filter_index   (written in this order, uncompressed)
// filter_partition  := the policy's filter bytes for the partition's keys
// top_level_filter_index := Block with value delta encoding, restart interval IndexBlockRestartInterval,
//                           one entry per partition, in order:
//   key   := partition key, as an internal key, or its user key alone when the index's keys are
//            user keys (rocksdb.index.key.is.user.key = 1):
//              coupled   (RocksDB 7.8): the separator of the last data block whose keys the
//                         partition holds (the index builder's PartitionKey)
//              decoupled (decouple_partitioned_filters): the partition's last user key ++ trailer
//                         fixed64 0 (sequence 0, type Deletion: the largest internal key of that user key)
//   value := BlockHandle of the partition (full at restart points, else varsigned64 size delta)
// metaindex: "partitionedfilter." + policy name -> top_level_filter_index
// A partition holds keys_per_partition = ApproximateNumEntries(MetadataBlockSize * (100 -
// deviation) / 100, rounded up) keys. Coupled: when a partition reaches that count the index is
// asked to cut, and the filter cuts whenever the index cuts. Decoupled: the filter cuts before
// the next key once it holds that many distinct keys.

/// <summary>
/// RocksDB's PartitionedFilterBlockBuilder: whole user keys and/or prefixes (<see cref="FilterKeyAdder"/>) go into filter partitions of about
/// <see cref="TableOptions.MetadataBlockSize"/> bytes each (every partition built by the same bits
/// builder, so <see cref="TableOptions.OptimizeFiltersForMemory"/> sizes each one), plus a
/// top-level filter index. Partitions are cut together with index partitions (coupled, what
/// RocksDB 7.8 writes) or on their own key count (decoupled, RocksDB PR 12939). Finished
/// partitions are kept in memory until <see cref="Finish"/>. Not thread-safe.
/// </summary>
internal sealed class PartitionedFilterBlockBuilder : IFilterBlockBuilder
{
    private readonly IFilterBitsBuilder _bits;
    private readonly FilterKeyAdder _adder;
    private readonly bool _decoupled;
    private readonly PartitionedIndexBuilder _index;
    private readonly int _restartInterval;
    private readonly long _keysPerPartition;
    private readonly ByteBuffer _filters = new(4096, spillToNative: true);
    private readonly ByteBuffer _keys = new(256);
    private readonly ByteBuffer _prevKey = new(64);
    private readonly List<(int KeyOffset, int KeyLength, int FilterOffset, int FilterLength)> _partitions = [];
    private long _addedToPartition; // Add calls with a key since the last cut (coupled counting, as 7.8)
    private long _totalInBuilt;
    private bool _any;

    public PartitionedFilterBlockBuilder(IFilterPolicy policy, bool wholeKeyFiltering, bool optimizeForMemory, PartitionedIndexBuilder index,
        int restartInterval, int metadataBlockSize, int blockSizeDeviation, bool decoupled, KvPrefixExtractor? prefixExtractor = null)
    {
        _bits = policy.CreateBuilder(optimizeForMemory);
        _adder = new FilterKeyAdder(prefixExtractor, wholeKeyFiltering);
        _decoupled = decoupled;
        _index = index;
        _restartInterval = restartInterval;
        MetaIndexKey = TableFormat.PartitionedFilterBlockPrefix + policy.Name;
        _keysPerPartition = KeysPerPartition(policy, metadataBlockSize, blockSizeDeviation);
    }

    public string MetaIndexKey { get; }

    public bool IsEmpty => !_any;

    public long EntriesAdded => _totalInBuilt + _bits.KeyCount;

    /// <summary>Filter partitions cut so far.</summary>
    public int NumPartitions => _partitions.Count;

    /// <summary>
    /// Keys per filter partition: ApproximateNumEntries of the metadata block size less the
    /// deviation allowance (the index cuts late, at a data block boundary); when that is below one
    /// key, the smallest larger size (grown by a quarter at a time) that holds one, and past 100 000
    /// bytes one key per byte of the partition size, as RocksDB does.
    /// </summary>
    public static long KeysPerPartition(IFilterPolicy policy, int metadataBlockSize, int blockSizeDeviation)
    {
        long partitionSize = Math.Max(PartitionedIndexBuilder.DeviationLimit(metadataBlockSize, blockSizeDeviation), 1);
        long keys = policy.ApproximateNumEntries(partitionSize);
        if (keys >= 1)
        {
            return keys;
        }
        for (long larger = Math.Max(partitionSize + 4, 16); larger <= 100_000; larger += larger / 4)
        {
            keys = policy.ApproximateNumEntries(larger);
            if (keys >= 1)
            {
                return keys;
            }
        }
        return partitionSize;
    }

    public void Add(ReadOnlySpan<byte> userKey)
    {
        if (_decoupled)
        {
            if (_bits.KeyCount >= _keysPerPartition)
            {
                AddNextPrefix(userKey);
                Cut(DecoupledKey());
            }
        }
        else
        {
            if (_addedToPartition == _keysPerPartition)
            {
                _index.RequestPartitionCut(); // granted at the index's next data block boundary
            }
            if (_index.ShouldCutFilterBlock())
            {
                AddNextPrefix(userKey);
                Cut(_index.PartitionKey);
            }
        }
        int calls = _adder.Add(_bits, userKey);
        if (calls > 0)
        {
            _addedToPartition += calls;
            _any = true;
        }
        if (_decoupled)
        {
            _prevKey.Clear();
            _prevKey.Append(userKey);
        }
    }

    public BlockHandle Finish(ITableBlockWriter writer, out long filterSize)
    {
        if (_decoupled)
        {
            if (_bits.KeyCount > 0)
            {
                Cut(DecoupledKey());
            }
        }
        else if (_index.ShouldCutFilterBlock())
        {
            Cut(_index.PartitionKey);
        }
        bool userKeys = _index.IndexKeyIsUserKey;
        using var top = new BlockBuilder(_restartInterval, valueDeltaEncoding: true);
        Span<byte> full = stackalloc byte[BlockHandle.MaxEncodedLength];
        Span<byte> delta = stackalloc byte[Coding.MaxVarint64Length];
        BlockHandle last = default;
        long size = 0;
        foreach ((int keyOffset, int keyLength, int filterOffset, int filterLength) in _partitions)
        {
            BlockHandle handle = writer.WriteBlock(_filters.WrittenSpan.Slice(filterOffset, filterLength), CompressionType.None);
            size += filterLength;
            int fullLength = handle.EncodeTo(full);
            long d = (long)handle.Size - (long)last.Size;
            int deltaLength = Coding.EncodeVarint64(delta, (ulong)((d << 1) ^ (d >> 63)));
            last = handle;
            ReadOnlySpan<byte> key = _keys.WrittenSpan.Slice(keyOffset, keyLength);
            top.Add(userKeys ? InternalKeys.UserKey(key) : key, full[..fullLength], delta[..deltaLength]);
        }
        ReadOnlySpan<byte> topBlock = top.Finish();
        filterSize = size + topBlock.Length;
        return writer.WriteBlock(topBlock, CompressionType.None);
    }

    public void Dispose()
    {
        _bits.Dispose();
        _adder.Dispose();
        _filters.Dispose();
        _keys.Dispose();
        _prevKey.Dispose();
    }

    /// <summary>The previous user key with sequence 0 and type Deletion (trailer 0): the largest internal key for it.</summary>
    private ReadOnlySpan<byte> DecoupledKey()
    {
        _prevKey.AppendFixed64(0);
        return _prevKey.WrittenSpan;
    }

    /// <summary>
    /// Before a partition closes, the next key's prefix goes into it too (unless it equals the last
    /// prefix recorded): a Seek to a key between the partition's last key and the next key, with the
    /// next key's prefix, lands in this partition and must not be told the prefix is absent
    /// (RocksDB's MaybeCutAFilterBlock).
    /// </summary>
    private void AddNextPrefix(ReadOnlySpan<byte> nextKey)
    {
        KvPrefixExtractor? extractor = _adder.Extractor;
        if (extractor != null && extractor.InDomain(nextKey))
        {
            ReadOnlySpan<byte> prefix = extractor.Transform(nextKey);
            if (!prefix.SequenceEqual(_adder.LastPrefix))
            {
                _bits.AddKey(prefix);
                _addedToPartition++;
                _any = true;
            }
        }
    }

    private void Cut(ReadOnlySpan<byte> internalKey)
    {
        _totalInBuilt += _bits.KeyCount;
        int keyOffset = _keys.Length;
        _keys.Append(internalKey);
        int filterOffset = _filters.Length;
        _bits.Finish(_filters);
        _partitions.Add((keyOffset, internalKey.Length, filterOffset, _filters.Length - filterOffset));
        _addedToPartition = 0;
        _adder.Reset();
    }
}
