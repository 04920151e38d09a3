using System.Globalization;

namespace KvEngine.DbBench;

/// <summary>
/// kvbench's answer to -help / --help, in db_bench's (gflags') layout: every flag with its
/// meaning and default. Each name here must be accepted by <see cref="BenchFlags.Parse"/> with its
/// default value (a test checks it), so the listing cannot advertise a flag kvbench refuses.
/// Immutable.
/// </summary>
internal static class BenchFlagsHelp
{
    /// <summary>(flag, default, meaning) for the db_bench workloads.</summary>
    public static readonly (string Name, string Default, string Help)[] DbBench =
    [
        ("benchmarks", "fillseq,fillrandom,overwrite,readrandom,readseq",
            "Comma-separated list: fillseq, fillrandom, overwrite, fillsync, readrandom, readseq, readreverse, seekrandom, " +
            "deleterandom, readwhilewriting, mergerandom, multireadrandom, readrandommergerandom, stats, sstables, waitforcompaction, flush, compact, block_cache_entry_stats, memstats; or filterbench, cachebench, raftbench, largevalue, iouring alone"),
        ("engine", "kvengine", "Engine the workloads run on: kvengine, rocksdb (release RocksDB via the RocksDbSharp package) " +
            "zonetree (ZoneTree, a managed LSM) or lmdb (LMDB via LightningDB and the system's liblmdb.so.0; docs/benchmarks.md lists how the flags map); " +
            "flags an engine cannot honour are refused"),
        ("db", Path.Combine(Path.GetTempPath(), "kvbench"), "Database directory (deleted first unless -use_existing_db)"),
        ("num", "1000000", "Number of key/values to place in the database"),
        ("reads", "-1", "Number of read operations to do; -1 means -num"),
        ("merge_operator", "", "Merge operator for mergerandom and readrandommergerandom: uint64add or stringappend (db_bench's names)"),
        ("mergereadpercent", "70", "readrandommergerandom: percent of operations that merge (the rest read)"),
        ("merge_keys", "-1", "Number of distinct keys the merge benchmarks use; -1 means -num"),
        ("batch_size", "1", "multireadrandom: keys per MultiGet"),
        ("multiread_batched", "false", "multireadrandom: the batched MultiGet API when true, one Get per key when false (db_bench's vector MultiGet); -engine=rocksdb: rocksdb_batched_multi_get_cf or one rocksdb_get per key"),
        ("async_io", "false", "Iterators read ahead asynchronously on the I/O engine (ReadOptions.AsyncIO) and multireadrandom -multiread_batched uses MultiGetAsync (KvEngine; -engine=rocksdb: ReadOptions::async_io, which release RocksDB's librocksdb, built without liburing, serves synchronously)"),
        ("inflight", "0", "readrandom: requests each thread keeps in flight through GetAsync (0: synchronous Gets); -engine=rocksdb, lmdb and zonetree refuse it (no asynchronous Get)"),
        ("duration", "0", "Seconds to run each benchmark for instead of -num/-reads (0: off)"),
        ("threads", "1", "Number of concurrent threads to run"),
        ("key_size", "16", "Size of each key (at least 8)"),
        ("value_size", "100", "Size of each value"),
        ("compression_ratio", "0.5", "Fraction of its size a value compresses to"),
        ("seed", "0", "Seed base for random keys; 0 derives it from the time, as db_bench"),
        ("compression_type", "snappy", "Block compression: none, snappy, lz4, lz4hc, zstd"),
        ("compression_level", KvOptions.DefaultCompressionLevel.ToString(CultureInfo.InvariantCulture),
            "Codec level (RocksDB's compression_opts.level); 32767 is the codec's default"),
        ("checksum_type", "kXXH3", "Block checksum: kCRC32c or kXXH3"),
        ("bloom_bits", "-1", "Bloom filter bits per key; negative means none, as db_bench"),
        ("prefix_size", "0", "Fixed prefix extractor length (prefix Bloom filters, prefix seek); 0: none"),
        ("keys_per_prefix", "0", "Average keys per prefix: keys start with an 8-byte prefix number; 0: plain keys"),
        ("whole_key_filtering", "true", "Put whole keys (in addition to prefixes) in table filters"),
        ("prefix_same_as_start", "false", "Iterators stay within the seek key's prefix"),
        ("total_order_seek", "false", "Iterators ignore prefix filters"),
        ("seek_missing_prefix", "false", "seekrandom seeks to prefixes never written (byte 8 set to '1'; needs prefix_size > 8)"),
        ("seek_nexts", "0", "Next() calls after each Seek() in seekrandom"),
        ("optimize_filters_for_memory", "false", "Size filters to fill allocator size classes"),
        ("block_size", "4096", "Uncompressed data block size"),
        ("cache_size", KvBlockCache.DefaultCapacity.ToString(CultureInfo.InvariantCulture), "Block cache bytes"),
        ("cache_numshardbits", "-1", "Block cache shard bits; -1 picks by capacity"),
        ("cache_index_and_filter_blocks", "false", "Keep index and filter blocks in the block cache"),
        ("pin_l0_filter_and_index_blocks_in_cache", "false", "Pin level-0 tables' index and filter (and partitions) in the cache"),
        ("partition_index_and_filters", "false", "Partitioned index (kTwoLevelIndexSearch) and partitioned filters"),
        ("partition_index", "false", "Partitioned index (kTwoLevelIndexSearch) with a full filter"),
        ("index_type", "0", "Index type: 0 kBinarySearch, 2 kTwoLevelIndexSearch"),
        ("use_data_block_hash_index", "false", "Write data blocks with kDataBlockBinaryAndHash (a hash index for point lookups in each data block) instead of kDataBlockBinarySearch"),
        ("data_block_hash_table_util_ratio", "0.75", "With use_data_block_hash_index: keys per bucket of each block's hash index"),
        ("metadata_block_size", "4096", "Target size of index and filter partitions"),
        ("decouple_partitioned_filters", "true", "Cut filter partitions on their own key count (PR 12939), not with index partitions"),
        ("pin_top_level_index_and_filter", "false", "With cache_index_and_filter_blocks, pin top-level index and filter index"),
        ("top_level_index_pinning", "0", "Top-level index pinning tier: 0 fallback, 1 none, 2 flushed and similar, 3 all"),
        ("partition_pinning", "0", "Partition pinning tier: 0 fallback, 1 none, 2 flushed and similar, 3 all"),
        ("unpartitioned_pinning", "0", "Unpartitioned index/filter pinning tier: 0 fallback, 1 none, 2 flushed and similar, 3 all"),
        ("use_compressed_secondary_cache", "false", "Add a compressed secondary cache under the block cache"),
        ("compressed_secondary_cache_size", "8388608", "Secondary cache bytes (also turns it on)"),
        ("compressed_secondary_cache_compression_type", "lz4", "Secondary cache compression: none, lz4, zstd"),
        ("compressed_secondary_cache_split", "true", "Split secondary cache entries into size-class chunks"),
        ("open_files", "-1", "Table files kept open; -1 is unlimited"),
        ("write_buffer_size", "67108864", "Memtable bytes before it is flushed"),
        ("max_write_buffer_number", "2", "Memtables kept in memory at most"),
        ("min_write_buffer_number_to_merge", "1", "Immutable memtables waiting before a flush writes them into one table"),
        ("memtable_hash_index_ratio", "0.015625", "KvEngine only: memtable hash index size as a fraction of write_buffer_size; 0 turns it off"),
        ("memtable_huge_pages", "true", "KvEngine only: back memtables of 16 MiB or more with transparent huge pages (Linux)"),
        ("read_triggered_compaction_bytes_per_miss", "1024", "KvEngine only: compaction bytes a Get's vain search of a level-0 file is charged as; 0 turns read-triggered compaction of level 0 off"),
        ("num_column_families", "1", "Column families (default, column_family_name_000001...); fills and readrandom put key i in family i % N"),
        ("writes", "-1", "Number of write operations to do; -1 means -num"),
        ("finish_after_writes", "false", "readwhilewriting: the writer stops after -writes writes"),
        ("writes_per_range_tombstone", "0", "Writes between range tombstones (0: none)"),
        ("range_tombstone_width", "100", "Number of keys in a range tombstone's range"),
        ("max_num_range_tombstones", "0", "Maximum number of range tombstones to write"),
        ("writes_before_delete_range", "0", "Writes before the first range tombstone"),
        ("expand_range_tombstones", "false", "Write each range tombstone as its width point deletes"),
        ("allow_concurrent_memtable_write", "true", "Group members insert into the memtable concurrently"),
        ("disable_wal", "false", "Write without the log"),
        ("sync", "false", "Sync every write"),
        ("use_existing_db", "false", "Open the database at -db instead of creating it"),
        ("target_file_size_base", "67108864", "Target table size at level 1"),
        ("max_bytes_for_level_base", "268435456", "Level 1 size target"),
        ("max_bytes_for_level_multiplier", "10", "Growth factor between levels"),
        ("level0_file_num_compaction_trigger", "4", "Level-0 files that trigger a compaction"),
        ("level0_slowdown_writes_trigger", "20", "Level-0 files that slow writes"),
        ("level0_stop_writes_trigger", "36", "Level-0 files that stop writes"),
        ("max_background_jobs", "2", "Flush and compaction threads"),
        ("disable_auto_compactions", "false", "Compact only when asked"),
        ("rate_limiter_bytes_per_sec", "0", "Cap flush and compaction table writes at this many bytes a second (0: no limiter; RocksDB's GenericRateLimiter, fairness 10, writes only; -engine=rocksdb: release RocksDB's own)"),
        ("rate_limiter_refill_period_us", "100000", "The rate limiter's refill period"),
        ("use_direct_reads", "false", "Read table files with O_DIRECT, bypassing the page cache (-engine=rocksdb: release RocksDB's own)"),
        ("use_direct_io_for_flush_and_compaction", "false", "Write flush and compaction outputs with O_DIRECT (-engine=rocksdb: release RocksDB's own)"),
        ("compaction_readahead_size", "2097152", "Bytes compactions read ahead in each input (RocksDB's default; both engines)"),
        ("level_compaction_dynamic_file_size", "true", "Cut outputs at the next level's file boundaries"),
        ("level_compaction_dynamic_level_bytes", "false", "Size levels from the bottom up"),
        ("compaction_style", "0", "0 leveled, 1 universal, 2 FIFO"),
        ("compaction_pri", "3", "3 kMinOverlappingRatio, 4 kRoundRobin"),
        ("fifo_compaction_max_table_files_size_mb", "0", "FIFO: table megabytes kept"),
        ("fifo_compaction_allow_compaction", "false", "FIFO: merge small level-0 files"),
        ("universal_size_ratio", "1", "Universal: percent a run may exceed the runs it joins"),
        ("universal_min_merge_width", "2", "Universal: fewest runs a size-ratio compaction merges"),
        ("universal_max_merge_width", "4294967295", "Universal: most runs one compaction merges"),
        ("universal_max_size_amplification_percent", "200", "Universal: extra space over the oldest run before everything merges"),
        ("universal_compression_size_percent", "-1", "Universal: leave newer data uncompressed while older runs hold less than this percent (-1: compress all)"),
        ("universal_allow_trivial_move", "false", "Universal: move non-overlapping inputs instead of rewriting them"),
        ("ttl", "-1", "Seconds after which data is compacted again (RocksDB's ttl; 0: off, -1: the engine's default)"),
        ("periodic_compaction_seconds", "-1", "Seconds after which a file is rewritten (0: off, -1: the engine's default)"),
        ("statistics", "false", "Print RocksDB's tickers at the end"),
        ("histogram", "false", "Print latency histograms"),
        ("verify_checksum", "true", "Verify block checksums on reads"),
        ("report_interval_seconds", "0", "Seconds between progress reports (0: off)"),
        ("memory_sample_ms", "100", "kvbench: milliseconds between resident-set samples; the memory breakdown is printed at the highest one"),
    ];

    /// <summary>Prints every flag with its default, as db_bench's --help does.</summary>
    public static void Print(TextWriter output)
    {
        output.WriteLine("kvbench: KvEngine's db_bench. Usage: kvbench [-flag=value ...]");
        output.WriteLine();
        output.WriteLine("  Flags from db_bench:");
        foreach ((string name, string dflt, string help) in DbBench)
        {
            output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"    -{name} ({help}) default: {dflt}"));
        }
        output.WriteLine();
        output.WriteLine("  -benchmarks=filterbench (RocksDB's filter_bench): -average_keys_per_filter, -vary_key_count_ratio,");
        output.WriteLine("    -bits_per_key, -working_mem_size_mb, -m_keys_total_max, -m_queries, -filter_key_size, -quick");
        output.WriteLine("  -benchmarks=cachebench (RocksDB's cache_bench): -num_shard_bits, -lookup_insert_percent,");
        output.WriteLine("    -insert_percent, -lookup_percent, -erase_percent, -skew, -value_bytes, -ops_per_thread,");
        output.WriteLine("    -resident_ratio, -populate_cache, -lean");
        output.WriteLine("  -benchmarks=iouring (random 4 KiB O_DIRECT reads through each block-read engine, as fio's randread):");
        output.WriteLine("    -iouring_file, -iouring_file_size, -iouring_depths (1,32), -iouring_engines (io_uring,threadpool), -duration");
        output.WriteLine("  -benchmarks=largevalue: one value of -value_size bytes through Put, Flush, CompactRange, Get, TryGet,");
        output.WriteLine("    an iterator and a WAL replay; prints each stage's peak RSS (VmHWM, reset before each stage)");
        output.WriteLine("  -benchmarks=raftbench: -num writes and reads (-value_size, -threads clients) on one KvDb and on a");
        output.WriteLine("    3-node KvEngine.Replication cluster on 127.0.0.1 (leader writes, linearizable and stale reads)");
    }
}
