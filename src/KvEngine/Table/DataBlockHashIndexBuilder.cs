using KvEngine.Format;
using KvEngine.Util;

namespace KvEngine.Table;

/// <summary>
/// Collects a data block's (user-key hash, restart index) pairs and appends the block's hash index
/// (grammar in <see cref="DataBlockHashIndex"/>'s file) at <see cref="BlockBuilder.Finish"/>: RocksDB's
/// DataBlockHashIndexBuilder. Stops (<see cref="Valid"/> false) at the first key past restart
/// <see cref="DataBlockHashIndex.MaxRestartIndex"/>. Keeps its pair array across
/// <see cref="Reset"/>. Not thread-safe.
/// </summary>
internal sealed class DataBlockHashIndexBuilder
{
    private readonly double _bucketsPerKey;
    private ulong[] _pairs = new ulong[64]; // hash << 8 | restart index
    private int _count;
    private double _estimatedBuckets;

    public DataBlockHashIndexBuilder(double utilRatio)
    {
        if (!(utilRatio > 0) || double.IsInfinity(utilRatio))
        {
            throw new ArgumentOutOfRangeException(nameof(utilRatio), utilRatio, "The hash table's utilization ratio must be a positive number.");
        }
        _bucketsPerKey = 1 / utilRatio;
    }

    /// <summary>False once a key lay past the last restart a bucket can name: the block gets no index.</summary>
    public bool Valid { get; private set; } = true;

    /// <summary>Bytes the index would take if finished now (RocksDB's EstimateSize: buckets and their count).</summary>
    public int EstimatedSize => Valid ? DataBlockHashIndex.BucketCount(_estimatedBuckets) + sizeof(ushort) : 0;

    /// <summary>Records that the entry with internal key <paramref name="internalKey"/> lies in restart interval <paramref name="restartIndex"/>.</summary>
    public void Add(ReadOnlySpan<byte> internalKey, int restartIndex)
    {
        if (!Valid)
        {
            return;
        }
        if (restartIndex > DataBlockHashIndex.MaxRestartIndex)
        {
            Valid = false;
            return;
        }
        if (_count == _pairs.Length)
        {
            Array.Resize(ref _pairs, _pairs.Length * 2);
        }
        uint hash = DataBlockHashIndex.Hash(InternalKeys.UserKey(internalKey));
        _pairs[_count++] = ((ulong)hash << 8) | (uint)restartIndex;
        _estimatedBuckets += _bucketsPerKey;
    }

    /// <summary>Appends the bucket array and its count to <paramref name="block"/>; the caller sets the footer's flag.</summary>
    public void Finish(ByteBuffer block)
    {
        int n = DataBlockHashIndex.BucketCount(_estimatedBuckets);
        Span<byte> buckets = block.GetSpan(n + sizeof(ushort))[..n];
        buckets.Fill(DataBlockHashIndex.NoEntry);
        for (int i = 0; i < _count; i++)
        {
            ulong pair = _pairs[i];
            int bucket = (int)((uint)(pair >> 8) % (uint)n);
            byte restart = (byte)pair;
            byte current = buckets[bucket];
            if (current == DataBlockHashIndex.NoEntry)
            {
                buckets[bucket] = restart;
            }
            else if (current != restart)
            {
                buckets[bucket] = DataBlockHashIndex.Collision;
            }
        }
        block.Advance(n);
        Span<byte> count = block.GetSpan(sizeof(ushort));
        count[0] = (byte)n;
        count[1] = (byte)(n >> 8);
        block.Advance(sizeof(ushort));
    }

    public void Reset()
    {
        _count = 0;
        _estimatedBuckets = 0;
        Valid = true;
    }
}
