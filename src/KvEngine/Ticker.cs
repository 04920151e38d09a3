namespace KvEngine;

/// <summary>
/// Counters kept by <see cref="KvStatistics"/>. Each has RocksDB's ticker name (see
/// <see cref="KvStatistics.TickerName"/>), so tools that read RocksDB's statistics read ours;
/// the few counters RocksDB 7.8 lacks are named kvengine.*. The numeric values are not persisted
/// and may change between versions: use the names.
/// </summary>
public enum Ticker
{
    /// <summary>Block lookups not found in the block cache, all block kinds (rocksdb.block.cache.miss, BLOCK_CACHE_MISS).</summary>
    BlockCacheMiss,

    /// <summary>Block lookups found in the block cache, all block kinds (rocksdb.block.cache.hit, BLOCK_CACHE_HIT).</summary>
    BlockCacheHit,

    /// <summary>Point lookups a Bloom filter answered "not present", saving a data block read (rocksdb.bloom.filter.useful, BLOOM_FILTER_USEFUL).</summary>
    BloomFilterUseful,

    /// <summary>Point lookups a full Bloom filter answered "may be present" (rocksdb.bloom.filter.full.positive, BLOOM_FILTER_FULL_POSITIVE).</summary>
    BloomFilterFullPositive,

    /// <summary>Full-filter positives where the key was then found in the table: positives minus this are false positives (rocksdb.bloom.filter.full.true.positive, BLOOM_FILTER_FULL_TRUE_POSITIVE).</summary>
    BloomFilterFullTruePositive,

    /// <summary>Point lookups answered by a memtable, mutable or immutable (rocksdb.memtable.hit, MEMTABLE_HIT).</summary>
    MemtableHit,

    /// <summary>Point lookups that no memtable answered and went on to the table files (rocksdb.memtable.miss, MEMTABLE_MISS).</summary>
    MemtableMiss,

    /// <summary>Point lookups answered by a level-0 table file (rocksdb.l0.hit, GET_HIT_L0).</summary>
    GetHitL0,

    /// <summary>Point lookups answered by a level-1 table file (rocksdb.l1.hit, GET_HIT_L1).</summary>
    GetHitL1,

    /// <summary>Point lookups answered by a table file of level 2 or deeper (rocksdb.l2andup.hit, GET_HIT_L2_AND_UP).</summary>
    GetHitL2AndUp,

    /// <summary>Records (Put, Delete) written, counted per record of each committed batch (rocksdb.number.keys.written, NUMBER_KEYS_WRITTEN).</summary>
    NumberKeysWritten,

    /// <summary>Point lookups performed by Get and TryGet (rocksdb.number.keys.read, NUMBER_KEYS_READ).</summary>
    NumberKeysRead,

    /// <summary>Bytes of write batches written, as encoded in the WAL (rocksdb.bytes.written, BYTES_WRITTEN).</summary>
    BytesWritten,

    /// <summary>Seek and SeekForPrev calls on iterators (rocksdb.number.db.seek, NUMBER_DB_SEEK).</summary>
    NumberDbSeek,

    /// <summary>Next calls on iterators (rocksdb.number.db.next, NUMBER_DB_NEXT).</summary>
    NumberDbNext,

    /// <summary>Prev calls on iterators (rocksdb.number.db.prev, NUMBER_DB_PREV).</summary>
    NumberDbPrev,

    /// <summary>Syncs of the write-ahead log to stable storage (rocksdb.wal.synced, WAL_FILE_SYNCED).</summary>
    WalFileSynced,

    /// <summary>Bytes of write batches appended to the write-ahead log (rocksdb.wal.bytes, WAL_FILE_BYTES).</summary>
    WalFileBytes,

    /// <summary>Commit groups written by their leader, one per group: the leader's own write (rocksdb.write.self, WRITE_DONE_BY_SELF).</summary>
    WriteDoneBySelf,

    /// <summary>Writes committed on their writer's behalf by the leader of their commit group (rocksdb.write.other, WRITE_DONE_BY_OTHER).</summary>
    WriteDoneByOther,

    /// <summary>Bytes of table files written by memtable flushes (rocksdb.flush.write.bytes, FLUSH_WRITE_BYTES).</summary>
    FlushWriteBytes,

    /// <summary>Bytes of table files read by compactions (rocksdb.compact.read.bytes, COMPACT_READ_BYTES).</summary>
    CompactReadBytes,

    /// <summary>Bytes of table files written by compactions (rocksdb.compact.write.bytes, COMPACT_WRITE_BYTES).</summary>
    CompactWriteBytes,

    /// <summary>Microseconds writers spent delayed or stopped by write stalls (rocksdb.stall.micros, STALL_MICROS).</summary>
    StallMicros,

    /// <summary>Table files opened, including reopens after the open-file limit closed one (rocksdb.no.file.opens, NO_FILE_OPENS).</summary>
    NoFileOpens,

    /// <summary>Blocks read from table files (any kind, cache misses and uncached reads). KvEngine's own counter: kvengine.block.reads.</summary>
    BlockReads,

    /// <summary>Bytes of blocks read from table files, trailers included. KvEngine's own counter: kvengine.block.read.bytes.</summary>
    BlockReadBytes,

    /// <summary>Blocks inserted into the block cache (rocksdb.block.cache.add, BLOCK_CACHE_ADD).</summary>
    BlockCacheAdd,

    /// <summary>Block cache inserts refused because a strict-capacity cache was full of pinned blocks (rocksdb.block.cache.add.failures, BLOCK_CACHE_ADD_FAILURES).</summary>
    BlockCacheAddFailures,

    /// <summary>Data block lookups found in the block cache (rocksdb.block.cache.data.hit, BLOCK_CACHE_DATA_HIT).</summary>
    BlockCacheDataHit,

    /// <summary>Data block lookups not found in the block cache (rocksdb.block.cache.data.miss, BLOCK_CACHE_DATA_MISS).</summary>
    BlockCacheDataMiss,

    /// <summary>Index block lookups found in the block cache (rocksdb.block.cache.index.hit, BLOCK_CACHE_INDEX_HIT).</summary>
    BlockCacheIndexHit,

    /// <summary>Index block lookups not found in the block cache (rocksdb.block.cache.index.miss, BLOCK_CACHE_INDEX_MISS).</summary>
    BlockCacheIndexMiss,

    /// <summary>Filter block lookups found in the block cache (rocksdb.block.cache.filter.hit, BLOCK_CACHE_FILTER_HIT).</summary>
    BlockCacheFilterHit,

    /// <summary>Filter block lookups not found in the block cache (rocksdb.block.cache.filter.miss, BLOCK_CACHE_FILTER_MISS).</summary>
    BlockCacheFilterMiss,

    /// <summary>Charge in bytes of every block inserted into the block cache (rocksdb.block.cache.bytes.insert).</summary>
    BlockCacheBytesInsert,

    /// <summary>Data blocks inserted into the block cache (rocksdb.block.cache.data.add, BLOCK_CACHE_DATA_ADD).</summary>
    BlockCacheDataAdd,

    /// <summary>Charge in bytes of data blocks inserted into the block cache (rocksdb.block.cache.data.bytes.insert, BLOCK_CACHE_DATA_BYTES_INSERT).</summary>
    BlockCacheDataBytesInsert,

    /// <summary>Index blocks inserted into the block cache (rocksdb.block.cache.index.add, BLOCK_CACHE_INDEX_ADD).</summary>
    BlockCacheIndexAdd,

    /// <summary>Charge in bytes of index blocks inserted into the block cache (rocksdb.block.cache.index.bytes.insert, BLOCK_CACHE_INDEX_BYTES_INSERT).</summary>
    BlockCacheIndexBytesInsert,

    /// <summary>Filter blocks inserted into the block cache (rocksdb.block.cache.filter.add, BLOCK_CACHE_FILTER_ADD).</summary>
    BlockCacheFilterAdd,

    /// <summary>Charge in bytes of filter blocks inserted into the block cache (rocksdb.block.cache.filter.bytes.insert, BLOCK_CACHE_FILTER_BYTES_INSERT).</summary>
    BlockCacheFilterBytesInsert,

    /// <summary>Bytes requested for the blocks inserted into the block cache, before the allocator rounds them up to a size class. KvEngine's own counter: kvengine.block.cache.insert.requested.bytes.</summary>
    BlockCacheInsertRequestedBytes,

    /// <summary>Usable bytes the allocator actually gave the blocks inserted into the block cache; the excess over <see cref="BlockCacheInsertRequestedBytes"/> is internal fragmentation. KvEngine's own counter: kvengine.block.cache.insert.allocated.bytes.</summary>
    BlockCacheInsertAllocatedBytes,

    /// <summary>Block cache misses served from the secondary cache (rocksdb.secondary.cache.hits, SECONDARY_CACHE_HITS).</summary>
    SecondaryCacheHits,

    /// <summary>Block cache misses the secondary cache could not serve either, dummy entries included. KvEngine's own counter: kvengine.secondary.cache.misses.</summary>
    SecondaryCacheMisses,

    /// <summary>Lookups that found only the compressed secondary cache's placeholder for a block evicted once, which is then admitted on its second eviction (rocksdb.compressed.secondary.cache.dummy.hits, COMPRESSED_SECONDARY_CACHE_DUMMY_HITS).</summary>
    CompressedSecondaryCacheDummyHits,

    /// <summary>Lookups served by the compressed secondary cache with a real entry (rocksdb.compressed.secondary.cache.hits, COMPRESSED_SECONDARY_CACHE_HITS).</summary>
    CompressedSecondaryCacheHits,

    /// <summary>Bytes requested for blocks promoted from the secondary cache back into the block cache. KvEngine's own counter: kvengine.secondary.cache.promoted.requested.bytes.</summary>
    SecondaryCachePromotedRequestedBytes,

    /// <summary>Usable bytes allocated for blocks promoted from the secondary cache back into the block cache. KvEngine's own counter: kvengine.secondary.cache.promoted.allocated.bytes.</summary>
    SecondaryCachePromotedAllocatedBytes,

    /// <summary>Values a <see cref="KvCompactionFilter"/> removed during compactions (rocksdb.compaction.key.drop.user, COMPACTION_KEY_DROP_USER).</summary>
    CompactionKeyDropUser,

    /// <summary>MultiGet calls (rocksdb.number.multiget.get, NUMBER_MULTIGET_CALLS).</summary>
    NumberMultiGetCalls,

    /// <summary>Keys MultiGet calls looked up, duplicates included (rocksdb.number.multiget.keys.read, NUMBER_MULTIGET_KEYS_READ).</summary>
    NumberMultiGetKeysRead,

    /// <summary>Keys MultiGet calls found (rocksdb.number.multiget.keys.found, NUMBER_MULTIGET_KEYS_FOUND).</summary>
    NumberMultiGetKeysFound,

    /// <summary>Prefix Bloom filter checks: iterator seeks, and point lookups in prefix-only filters (rocksdb.bloom.filter.prefix.checked, BLOOM_FILTER_PREFIX_CHECKED).</summary>
    BloomFilterPrefixChecked,

    /// <summary>Prefix Bloom filter checks that proved the prefix absent, skipping the table or partition (rocksdb.bloom.filter.prefix.useful, BLOOM_FILTER_PREFIX_USEFUL).</summary>
    BloomFilterPrefixUseful,
}
