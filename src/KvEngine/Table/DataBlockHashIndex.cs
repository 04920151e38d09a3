using KvEngine.Filters;

namespace KvEngine.Table;

// The data-block hash index (RocksDB's kDataBlockBinaryAndHash, table/block_based/data_block_hash_index.h),
// between a data block's restart array and its footer:
//
// DataBlock := entry* restart: fixed32[num_restarts] hash_index? footer
// hash_index := bucket: u8[num_buckets] num_buckets: fixed16
// footer     := fixed32: num_restarts | (1 << 31 when hash_index is present)
// bucket     := restart_index (0..252)    the only restart interval holding keys with this hash
//             | 254 (kCollision)          keys of two or more restart intervals hash here
//             | 255 (kNoEntry)            no key of the block hashes here
//
// hash(user_key) = RocksDB's Hash(user_key, seed 397) (util/hash.cc; LegacyBloomHash.Hash here), and a
// key's bucket is hash % num_buckets. num_buckets = (u16)(keys_added / util_ratio) | 1, counting
// every entry (versions of one user key too); odd so the weak hash spreads. Written only when the
// block has at most 253 restarts and is at most 64 KiB with the index; otherwise the block is a
// plain one (bit 31 clear). docs/formats/table.md has the byte map.

/// <summary>
/// RocksDB's data-block hash index: the bucket math shared by the writer
/// (<see cref="DataBlockHashIndexBuilder"/>) and the reader (<see cref="BlockCursor.SeekForGet"/>).
/// Stateless and thread-safe.
/// </summary>
internal static class DataBlockHashIndex
{
    /// <summary>Bucket value: no key of the block hashes to the bucket.</summary>
    public const byte NoEntry = 255;

    /// <summary>Bucket value: keys of two or more restart intervals hash to the bucket.</summary>
    public const byte Collision = 254;

    /// <summary>The highest restart index a bucket can hold: blocks with more restarts carry no index.</summary>
    public const int MaxRestartIndex = 253;

    /// <summary>Largest block (restarts, index and footer included) that may carry the index: its offsets are 16-bit.</summary>
    public const int MaxBlockSize = 1 << 16;

    /// <summary>The footer bit that says the block carries the index.</summary>
    public const uint FooterFlag = 1u << 31;

    /// <summary>The hash seed RocksDB's GetSliceHash uses.</summary>
    public const uint Seed = 397;

    /// <summary>RocksDB's <c>GetSliceHash(user_key)</c>.</summary>
    public static uint Hash(ReadOnlySpan<byte> userKey) => LegacyBloomHash.Hash(userKey, Seed);

    /// <summary>
    /// The bucket count for a block whose keys summed <paramref name="estimatedBuckets"/> (1 / util
    /// ratio per key): truncated to 16 bits, at least 1, made odd — RocksDB's builder's rounding.
    /// </summary>
    public static int BucketCount(double estimatedBuckets)
    {
        ushort n = unchecked((ushort)(uint)estimatedBuckets);
        return n == 0 ? 1 : n | 1;
    }
}
