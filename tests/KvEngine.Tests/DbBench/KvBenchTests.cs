using System.Diagnostics;
using System.Text.RegularExpressions;

using KvEngine.Tests.Db;

namespace KvEngine.Tests.DbBench;

/// <summary>
/// Runs the real kvbench executable: db_bench's flags are accepted with db_bench's spelling,
/// unknown or unbuilt ones are errors, and every benchmark prints the line that
/// ../shared/bench/compare.py (and people used to db_bench) read.
/// </summary>
public sealed partial class KvBenchTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-kvbench-");

    public void Dispose() => _dir.Delete(recursive: true);

    // compare.py's pattern: "NAME : X micros/op Y ops/sec".
    [GeneratedRegex(@"^(\w+)\s*:\s*([\d.]+)\s+micros/op\s+(\d+)\s+ops/sec")]
    private static partial Regex ReportLine();

    [Theory]
    [InlineData("kvengine")]
    [InlineData("rocksdb")]
    public void EveryBenchmarkPrintsADbBenchReportLine(string engine)
    {
        string[] benchmarks = ["fillseq", "fillrandom", "overwrite", "readrandom", "readseq", "readreverse", "seekrandom",
            "readwhilewriting", "deleterandom", "fillsync"];
        (int code, string stdout, string stderr) = Run(
            $"-engine={engine}", $"-db={Path.Combine(_dir.FullName, "db")}", "-benchmarks=" + string.Join(',', benchmarks) + ",stats,flush,compact,sstables",
            "-num=3000", "-key_size=16", "-value_size=100", "-compression_type=lz4", "-bloom_bits=10", "-histogram=1",
            "-statistics=1", "-writes_per_range_tombstone=500", "-max_num_range_tombstones=3");
        Assert.True(code == 0, stderr);
        Assert.Contains($"Engine:     {engine} (", stdout, StringComparison.Ordinal);
        var seen = new HashSet<string>();
        foreach (string line in stdout.Split('\n'))
        {
            Match m = ReportLine().Match(line.Trim());
            if (m.Success)
            {
                seen.Add(m.Groups[1].Value);
                Assert.True(long.Parse(m.Groups[3].Value, System.Globalization.CultureInfo.InvariantCulture) > 0, line);
            }
        }
        Assert.Equal(benchmarks.Order(), seen.Order());
        Assert.Matches(@"readrandom\s*:.*\(\d+ of 3000 found\)", stdout);
        Assert.Contains("Percentiles: P50:", stdout, StringComparison.Ordinal);
        Assert.Contains("Cumulative compaction:", stdout, StringComparison.Ordinal);
        Assert.Contains("rocksdb.number.keys.written COUNT : ", stdout, StringComparison.Ordinal);
        Assert.Contains($"DB path: [{Path.Combine(_dir.FullName, "db")}]", stdout, StringComparison.Ordinal);
        Assert.Contains("Number of range deletions: 3", stdout, StringComparison.Ordinal);
        Assert.Matches(@"compact\s*: [\d.]+ seconds", stdout);
        Assert.Matches(@"--- level 1 ---", stdout); // sstables after compact: the data on level 1
        // Each benchmark's managed allocation per operation follows its report line.
        foreach (string b in benchmarks)
        {
            Assert.Matches(b + @"\s*: allocated \d+\.\d\d B/op on benchmark threads, \d+\.\d\d B/op process-wide", stdout);
        }
        Assert.Matches(@"Memory: peak RSS [\d.]+ MB", stdout);
        // The breakdown at the end (the one at the highest sample needs a sample, so a run shorter
        // than the interval may not print it): GC heap, KvEngine's native allocator (RocksDB: its
        // structures' total), and the engine's properties, every figure known (no "?").
        Assert.Matches(@"Memory at end \(end, [\d.]+ s\): RSS [\d.]+ MB = GC heap [\d.]+ MB .* \+ (native allocator [\d.]+ MB resident \(live [\d.]+ MB: memtables -?[\d.]+ MB[^)]*\)|engine [\d.]+ MB) \+ rest -?[\d.]+ MB .*; engine: memtables [\d.]+ MB, table readers [\d.]+ MB, block cache [\d.]+ MB \(pinned [\d.]+ MB\)", stdout);
    }

    [Theory]
    [InlineData("kvengine")]
    [InlineData("rocksdb")]
    public void DataBlockHashIndexFlagsReachTheTables(string engine)
    {
        // db_bench 7.8's -use_data_block_hash_index and -data_block_hash_table_util_ratio become
        // the engine's table options: the OPTIONS file says so and the Gets still find every key.
        string db = Path.Combine(_dir.FullName, engine);
        (int code, string stdout, string stderr) = Run($"-engine={engine}", $"-db={db}", "-benchmarks=fillseq,flush,readrandom",
            "-num=3000", "-use_data_block_hash_index=1", "-data_block_hash_table_util_ratio=0.5");
        Assert.True(code == 0, stderr);
        Assert.Matches(@"readrandom\s*:.*\(3000 of 3000 found\)", stdout);
        string options = File.ReadAllText(Directory.GetFiles(db, "OPTIONS-*").Order(StringComparer.Ordinal).Last());
        Assert.Contains("data_block_index_type=kDataBlockBinaryAndHash", options, StringComparison.Ordinal);
        Assert.Contains("data_block_hash_table_util_ratio=0.500000", options, StringComparison.Ordinal);
    }

    [Fact]
    public void RocksDbEngineRunsReleaseRocksDb()
    {
        // The rocksdb engine writes a RocksDB database with the release library (its OPTIONS file
        // names the version) and reads back what it wrote.
        string db = Path.Combine(_dir.FullName, "rocks");
        (int code, string stdout, string stderr) = Run("-engine=rocksdb", $"-db={db}", "-benchmarks=fillseq,readrandom",
            "-num=2000", "-compression_type=zstd", "-partition_index_and_filters=1", "-cache_index_and_filter_blocks=1",
            "-bloom_bits=10", "-optimize_filters_for_memory=1", "-checksum_type=kCRC32c", "-cache_numshardbits=2");
        Assert.True(code == 0, stderr);
        Assert.Matches(@"Engine:     rocksdb \(release RocksDB \d+\.\d+\.\d+ via RocksDbSharp", stdout);
        Assert.Matches(@"readrandom\s*:.*\(\d+ of 2000 found\)", stdout);
        Assert.Matches(@"Memory at end \(end, [\d.]+ s\): RSS [\d.]+ MB = GC heap [\d.]+ MB .* \+ engine [\d.]+ MB \+ rest -?[\d.]+ MB .*; engine: memtables [\d.]+ MB, table readers [\d.]+ MB, block cache [\d.]+ MB \(pinned [\d.]+ MB\)", stdout);
        string options = File.ReadAllText(Directory.GetFiles(db, "OPTIONS-*").Order(StringComparer.Ordinal).Last());
        Assert.Contains("compression=kZSTD", options, StringComparison.Ordinal);
        Assert.Contains("index_type=kTwoLevelIndexSearch", options, StringComparison.Ordinal);
        Assert.Contains("partition_filters=true", options, StringComparison.Ordinal);
        Assert.Contains("checksum=kCRC32c", options, StringComparison.Ordinal);
        Assert.Contains("level_compaction_dynamic_level_bytes=false", options, StringComparison.Ordinal);
        Assert.Contains("enable_pipelined_write=true", options, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("rocksdb")]
    [InlineData("kvengine")]
    public void DirectIOFlagsReachTheEnginesOptions(string engine)
    {
        // Each engine records the direct I/O flags and the compaction readahead in its OPTIONS file
        // (RocksDB: release RocksDB's own options), and reads back what it wrote through them.
        string db = Path.Combine(_dir.FullName, "direct-" + engine);
        (int code, string stdout, string stderr) = Run($"-engine={engine}", $"-db={db}", "-benchmarks=fillrandom,compact,readrandom",
            "-num=3000", "-use_direct_reads=1", "-use_direct_io_for_flush_and_compaction=1", "-compaction_readahead_size=1048576");
        Assert.True(code == 0, stderr);
        Assert.Matches(@"readrandom\s*:.*\(\d+ of 3000 found\)", stdout);
        string options = File.ReadAllText(Directory.GetFiles(db, "OPTIONS-*").Order(StringComparer.Ordinal).Last());
        Assert.Contains("use_direct_reads=true", options, StringComparison.Ordinal);
        Assert.Contains("use_direct_io_for_flush_and_compaction=true", options, StringComparison.Ordinal);
        Assert.Contains("compaction_readahead_size=1048576", options, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("rocksdb")]
    [InlineData("kvengine")]
    public void UniversalAndTtlFlagsReachTheEnginesOptions(string engine)
    {
        // db_bench's spellings; each engine records them in its OPTIONS file (RocksDB: release
        // RocksDB's own options) and reads back what it wrote under universal compaction.
        string db = Path.Combine(_dir.FullName, "universal-" + engine);
        (int code, string stdout, string stderr) = Run($"-engine={engine}", $"-db={db}", "-benchmarks=fillrandom,compact,readrandom",
            "-num=3000", "-compaction_style=1", "-universal_size_ratio=7", "-universal_min_merge_width=3", "-universal_max_merge_width=9",
            "-universal_max_size_amplification_percent=150", "-universal_compression_size_percent=40", "-universal_allow_trivial_move=true",
            "-ttl=5000", "-periodic_compaction_seconds=4000");
        Assert.True(code == 0, stderr);
        Assert.Matches(@"readrandom\s*:.*\([1-9]\d* of 3000 found\)", stdout);
        string options = File.ReadAllText(Directory.GetFiles(db, "OPTIONS-*").Order(StringComparer.Ordinal).Last());
        Assert.Contains("compaction_style=kCompactionStyleUniversal", options, StringComparison.Ordinal);
        foreach (string field in (string[])["compression_size_percent=40;", "allow_trivial_move=true;", "max_size_amplification_percent=150;",
            "max_merge_width=9;", "min_merge_width=3;", "size_ratio=7;"])
        {
            Assert.Contains(field, options, StringComparison.Ordinal);
        }
        Assert.Contains("\n  ttl=5000", options, StringComparison.Ordinal);
        Assert.Contains("periodic_compaction_seconds=4000", options, StringComparison.Ordinal); // universal: min(ttl, periodic)
    }

    [Fact]
    public void ZoneTreeEngineRunsTheSeekWorkloads()
    {
        // The zonetree engine (ZoneTree, a managed LSM) runs the same workloads and reads back what
        // it wrote; flush moves everything into its disk segment.
        string db = Path.Combine(_dir.FullName, "zonetree");
        (int code, string stdout, string stderr) = Run("-engine=zonetree", $"-db={db}",
            "-benchmarks=fillseq,readrandom,fillrandom,flush,readrandom,seekrandom,readseq,sstables", "-num=2000", "-seek_nexts=3", "-compression_type=lz4");
        Assert.True(code == 0, stderr);
        Assert.Matches(@"Engine:     zonetree \(ZoneTree \d+\.\d+\.\d+", stdout);
        Assert.Matches(@"readrandom\s*:.*\(2000 of 2000 found\)", stdout); // after fillseq every key exists
        Assert.Matches(@"seekrandom\s*:.*\(\d+ of 2000 found\)", stdout);
        Assert.Matches(@"readseq\s*:.*ops/sec", stdout);
        Assert.Matches(@"disk segment: [1-9]\d* records", stdout);
    }

    [LmdbFact]
    public void LmdbEngineRunsTheReadWorkloads()
    {
        // The lmdb engine (LMDB through LightningDB and the system's liblmdb.so.0) fills, reads back
        // every key it wrote (Get, batched Gets, cursor seeks), reads while a writer runs, and
        // reports LMDB's version, its B+tree and the peak RSS.
        string db = Path.Combine(_dir.FullName, "lmdb");
        (int code, string stdout, string stderr) = Run("-engine=lmdb", $"-db={db}",
            "-benchmarks=fillseq,readrandom,multireadrandom,seekrandom,readseq,readreverse,fillrandom,overwrite,readwhilewriting,deleterandom,flush,compact,waitforcompaction,sstables",
            "-num=2000", "-seek_nexts=3", "-batch_size=7", "-threads=2");
        Assert.True(code == 0, stderr);
        Assert.Matches(@"Engine:     lmdb \(LMDB 0\.9\.\d+ from liblmdb\.so\.0 via LightningDB 0\.24\.", stdout);
        // After fillseq every key exists (the message is the first thread's of the two).
        Assert.Matches(@"readrandom\s*:.* 4000 operations;.*\(2000 of 2000 found\)", stdout);
        Assert.Matches(@"multireadrandom\s*:.*\((20\d\d) of \1 found\)", stdout); // whole batches of 7
        Assert.Matches(@"seekrandom\s*:.*\(2000 of 2000 found\)", stdout);
        Assert.Matches(@"readseq\s*:.* 4000 operations", stdout);
        Assert.Matches(@"readreverse\s*:.* 4000 operations", stdout);
        Assert.Matches(@"readwhilewriting\s*:.*\(\d+ of 2000 found\)", stdout);
        Assert.Matches(@"B\+tree: depth \d+, \d+ branch pages, [1-9]\d* leaf pages, \d+ overflow pages, \d+ entries", stdout);
        Assert.Matches(@"Memory: peak RSS [\d.]+ MB", stdout);
        Assert.True(File.Exists(Path.Combine(db, "data.mdb")), "no LMDB environment at " + db);
    }

    [Theory]
    [InlineData("-merge_operator=uint64add", "-merge_operator")]
    [InlineData("-num_column_families=2", "num_column_families")]
    [InlineData("-writes_per_range_tombstone=10", "range deletion")]
    [InlineData("-benchmarks=mergerandom", "merge operator")]
    public void LmdbEngineRefusesFlagsItCannotMap(string flag, string expected)
    {
        string db = Path.Combine(_dir.FullName, "db");
        (int code, _, string stderr) = Run("-engine=lmdb", $"-db={db}", "-num=10", flag);
        Assert.NotEqual(0, code);
        Assert.Contains("-engine=lmdb cannot map", stderr, StringComparison.Ordinal);
        Assert.Contains(expected, stderr, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("-benchmarks=readreverse", "readreverse")]
    [InlineData("-merge_operator=uint64add", "-merge_operator")]
    [InlineData("-num_column_families=2", "num_column_families")]
    [InlineData("-writes_per_range_tombstone=10", "range deletion")]
    public void ZoneTreeEngineRefusesFlagsItCannotMap(string flag, string expected)
    {
        string db = Path.Combine(_dir.FullName, "db");
        (int code, _, string stderr) = Run("-engine=zonetree", $"-db={db}", "-num=10", flag);
        Assert.NotEqual(0, code);
        Assert.Contains("-engine=zonetree cannot map", stderr, StringComparison.Ordinal);
        Assert.Contains(expected, stderr, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("-use_compressed_secondary_cache=1", "compressed secondary cache")]
    [InlineData("-level_compaction_dynamic_file_size=false", "level_compaction_dynamic_file_size")]
    [InlineData("-benchmarks=cachebench", "cachebench")]
    [InlineData("-merge_operator=uint64add", "-merge_operator")]
    [InlineData("-num_column_families=2", "num_column_families")]
    public void RocksDbEngineRefusesFlagsItCannotMap(string flag, string expected)
    {
        string db = Path.Combine(_dir.FullName, "db");
        (int code, _, string stderr) = Run("-engine=rocksdb", $"-db={db}", "-num=10", flag);
        Assert.NotEqual(0, code);
        Assert.Contains("-engine=rocksdb cannot map", stderr, StringComparison.Ordinal);
        Assert.Contains(expected, stderr, StringComparison.Ordinal);
        Assert.False(Directory.Exists(db));
    }

    [Theory]
    [InlineData("-help")]
    [InlineData("--help")]
    public void HelpPrintsEveryFlagWithItsDefaultAndRunsNothing(string help)
    {
        string db = Path.Combine(_dir.FullName, "db");
        (int code, string stdout, string stderr) = Run($"-db={db}", help);
        Assert.True(code == 0, stderr);
        Assert.Contains("-num (Number of key/values to place in the database) default: 1000000", stdout, StringComparison.Ordinal);
        Assert.Contains("-compression_type (", stdout, StringComparison.Ordinal);
        Assert.False(Directory.Exists(db));

        // Every listed flag, given its listed default, is accepted: the listing names no flag kvbench refuses.
        var args = new List<string>();
        foreach (Match m in Regex.Matches(stdout, @"^\s+-(\w+) \(.*\) default: (.*)$", RegexOptions.Multiline))
        {
            args.Add($"-{m.Groups[1].Value}={m.Groups[2].Value.TrimEnd('\r')}");
        }
        Assert.True(args.Count > 40, stdout);
        args.Add($"-db={db}");
        args.Add("-help");
        (code, _, stderr) = Run([.. args]);
        Assert.True(code == 0, stderr);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void PartitionedFlagsFlushAndBlockCacheEntryStats(bool decoupled)
    {
        string db = Path.Combine(_dir.FullName, "db");
        (int code, string stdout, string stderr) = Run(
            $"-db={db}", "-benchmarks=fillrandom,memstats,flush,readrandom,block_cache_entry_stats", "-num=4000",
            "-partition_index_and_filters=1", "-metadata_block_size=512", $"-decouple_partitioned_filters={(decoupled ? 1 : 0)}",
            "-cache_index_and_filter_blocks=1", "-pin_top_level_index_and_filter=1", "-partition_pinning=3", "-bloom_bits=10",
            "-disable_wal=1", "-compression_type=lz4", "-cache_size=4000000");
        Assert.True(code == 0, stderr);
        Assert.Matches(@"readrandom\s*:.*\([1-9]\d* of 4000 found\)", stdout);
        Assert.Contains("\nflush memtable\n", stdout, StringComparison.Ordinal);
        // db_bench's memstats lines, before the flush: every write still in the active memtable.
        Assert.Contains("\nrocksdb.num-immutable-mem-table: 0\n", stdout, StringComparison.Ordinal);
        Assert.Contains("\nrocksdb.num-entries-active-mem-table: 4000\n", stdout, StringComparison.Ordinal);
        Assert.Contains("\nrocksdb.num-entries-imm-mem-tables: 0\n", stdout, StringComparison.Ordinal);
        Assert.Matches(@"\nrocksdb\.cur-size-active-mem-table: [1-9]\d*\n", stdout);
        Assert.Contains("Block cache entry stats(count,size,portion):", stdout, StringComparison.Ordinal);
        Assert.Matches(@" IndexBlock\(\d+,", stdout);
        Assert.Matches(@" FilterBlock\(\d+,", stdout);
        Assert.Matches(@" FilterMetaBlock\(\d+,", stdout);
        // The flush benchmark left the data in a two-level table, which RocksDB's sst_dump reads.
        string table = Assert.Single(Directory.GetFiles(db, "*.sst"));
        Assert.Contains("rocksdb.block.based.table.index.type: 0x02000000", KvEngine.Tests.Table.RocksDbTools.Properties(table), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("-index_type=1", "kTwoLevelIndexSearch")]
    [InlineData("-partition_pinning=4", "partition_pinning")]
    [InlineData("-no_such_flag=1", "unknown flag")]
    [InlineData("-num=abc", "-num=abc")]
    [InlineData("-compression_type=bzip2", "compression")]
    [InlineData("-benchmarks=nosuchbench", "nosuchbench")]
    [InlineData("-engine=leveldb", "expected kvengine, rocksdb, zonetree or lmdb")]
    [InlineData("-merge_operator=put", "no 'put' merge operator")]
    [InlineData("-merge_operator=sum", "unknown merge operator")]
    [InlineData("-benchmarks=mergerandom", "mergerandom needs -merge_operator")]
    public void BadFlagsAreErrorsWithAMessage(string flag, string expected)
    {
        (int code, _, string stderr) = Run($"-db={Path.Combine(_dir.FullName, "db")}", "-num=10", flag);
        Assert.NotEqual(0, code);
        Assert.Contains(expected, stderr, StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public void RangeTombstoneFlagsBehaveAsDbBench()
    {
        // Same seed: DeleteRange(k, k + width) and its expansion into width point deletes leave the
        // same live keys; db_bench's count line is printed; the trigger stops at the maximum.
        var live = new List<string>();
        foreach (bool expand in new[] { false, true })
        {
            string db = Path.Combine(_dir.FullName, expand ? "expanded" : "ranges");
            (int code, string stdout, string stderr) = Run($"-db={db}", "-benchmarks=fillrandom", "-num=3000", "-seed=7",
                "-writes_per_range_tombstone=10", "-range_tombstone_width=25", "-max_num_range_tombstones=40",
                "-writes_before_delete_range=100", "-write_buffer_size=65536", "-compression_type=none",
                $"-expand_range_tombstones={expand.ToString().ToLowerInvariant()}");
            Assert.True(code == 0, stderr);
            if (!expand)
            {
                Assert.Contains("Number of range deletions: 40", stdout, StringComparison.Ordinal);
            }
            using KvDb kv = KvDb.Open(db, new KvOptions { CreateIfMissing = false });
            var keys = new System.Text.StringBuilder();
            int n = 0;
            using (KvIterator it = kv.NewIterator())
            {
                for (it.SeekToFirst(); it.Valid; it.Next())
                {
                    keys.Append(Convert.ToHexString(it.Key)).Append('\n');
                    n++;
                }
            }
            Assert.InRange(n, 1000, 2900); // some keys written, some deleted by the 40 x 25-key ranges
            live.Add(keys.ToString());
        }
        Assert.Equal(live[0], live[1]);
    }

    [Fact]
    public void MergeBenchmarksBehaveAsDbBench()
    {
        // mergerandom merges -num operands; readrandommergerandom merges -mergereadpercent percent
        // of its operations and reads the rest; every operand is in the database as uint64add counters.
        string db = Path.Combine(_dir.FullName, "merge");
        (int code, string stdout, string stderr) = Run($"-db={db}", "-benchmarks=mergerandom,readrandommergerandom",
            "-merge_operator=uint64add", "-value_size=8", "-num=3000", "-seed=3", "-mergereadpercent=60", "-merge_keys=500",
            "-write_buffer_size=16384");
        Assert.True(code == 0, stderr);
        Assert.Matches(@"mergerandom\s*:\s*[\d.]+ micros/op \d+ ops/sec .*\( updates:3000\)", stdout);
        Match m = Regex.Match(stdout, @"readrandommergerandom\s*:.*\(reads:(\d+) merges:(\d+) total:3000 hits:(\d+) maxlength:(\d+)\)");
        Assert.True(m.Success, stdout);
        long reads = long.Parse(m.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture);
        long merges = long.Parse(m.Groups[2].Value, System.Globalization.CultureInfo.InvariantCulture);
        Assert.Equal(3000, reads + merges);
        Assert.InRange(merges, 1600, 2000); // 60% of 3000, give or take the draw
        Assert.Equal(reads, long.Parse(m.Groups[3].Value, System.Globalization.CultureInfo.InvariantCulture)); // 500 keys, all merged by then
        Assert.Equal("8", m.Groups[4].Value);
        using KvDb kv = KvDb.Open(db, new KvOptions { CreateIfMissing = false, MergeOperator = UInt64AddOperator.Instance });
        Assert.Equal((ulong)(3000 + merges), kv.LatestSequenceNumber);
        int keys = 0;
        using (KvIterator it = kv.NewIterator())
        {
            for (it.SeekToFirst(); it.Valid; it.Next())
            {
                Assert.Equal(8, it.Value.Length);
                keys++;
            }
        }
        Assert.Equal(500, keys);
    }

    [Theory]
    [InlineData("kvengine")]
    [InlineData("rocksdb")]
    public void MultiReadRandomReadsBatchesOfKeys(string engine)
    {
        // db_bench's multireadrandom: -reads keys in MultiGets of -batch_size random keys, counted as
        // keys; after fillseq of -num keys every key is found.
        string db = Path.Combine(_dir.FullName, "multiread-" + engine);
        (int code, string stdout, string stderr) = Run($"-engine={engine}", $"-db={db}", "-benchmarks=fillseq,flush,multireadrandom",
            "-num=3000", "-reads=960", "-batch_size=32", "-multiread_batched=true", "-seed=5");
        Assert.True(code == 0, stderr);
        Assert.Matches(@"multireadrandom\s*:\s*[\d.]+ micros/op \d+ ops/sec .*\(960 of 960 found\)", stdout);
    }

    [Fact]
    public void FinishAfterWritesStopsTheWriter()
    {
        // The writer stops after -writes writes (or earlier, if the readers finish first, as in
        // db_bench): the database never holds more writes than the fill plus those.
        string db = Path.Combine(_dir.FullName, "rww");
        (int code, string stdout, string stderr) = Run($"-db={db}",
            "-benchmarks=fillseq,readwhilewriting", "-num=2000", "-writes=300", "-reads=200000", "-finish_after_writes",
            "-writes_per_range_tombstone=50", "-max_num_range_tombstones=1000", "-write_buffer_size=16384",
            "-max_write_buffer_number=8", "-min_write_buffer_number_to_merge=4", "-disable_auto_compactions");
        Assert.True(code == 0, stderr);
        Assert.Matches(@"readwhilewriting\s*:.*\(\d+ of 200000 found\)", stdout);
        using KvDb kv = KvDb.Open(db, new KvOptions { CreateIfMissing = false });
        // fillseq wrote 300 puts (-writes) and 6 range deletions, the writer at most as many.
        Assert.InRange(kv.LatestSequenceNumber, 306UL, 612UL);
    }

    [Fact]
    public void NumColumnFamiliesSpreadsKeysOverFamiliesAsDbBench()
    {
        // The same fill by db_bench and kvbench: the same family names, created at open, and key i
        // in family i % N in both; readrandom looks each key up in its own family.
        string ours = Path.Combine(_dir.FullName, "cf-kvbench");
        string theirs = Path.Combine(_dir.FullName, "cf-dbbench");
        string[] flags = ["-benchmarks=fillseq,readrandom", "-num=600", "-key_size=16", "-value_size=20", "-compression_type=none",
            "-num_column_families=3"];
        (int code, string stdout, string stderr) = Run([$"-db={ours}", "-seed=1", .. flags]);
        Assert.True(code == 0, stderr);
        Assert.Matches(@"readrandom\s*:.*\(600 of 600 found\)", stdout);
        Interop.KvEngineReadsRocksDbTests.RunDbBench(theirs, flags);
        string[] names = ["default", "column_family_name_000001", "column_family_name_000002"];
        Assert.Equal(names, KvDb.ListColumnFamilies(ours));
        Assert.Equal(names, KvDb.ListColumnFamilies(theirs));
        var descriptors = names.Select(n => new ColumnFamilyDescriptor(n)).ToList();
        using KvDb a = KvDb.Open(ours, new KvOptions { CreateIfMissing = false }, DbTestUtil.WithDefault(new KvOptions { CreateIfMissing = false }, descriptors));
        using KvDb b = KvDb.Open(theirs, new KvOptions { CreateIfMissing = false }, DbTestUtil.WithDefault(new KvOptions { CreateIfMissing = false }, descriptors));
        foreach (string name in names)
        {
            List<string> mine = Keys(a, name);
            Assert.Equal(200, mine.Count);
            Assert.Equal(Keys(b, name), mine);
        }
    }

    private static List<string> Keys(KvDb db, string family)
    {
        var keys = new List<string>();
        using KvIterator it = db.NewIterator(db.GetColumnFamily(family)!);
        for (it.SeekToFirst(); it.Valid; it.Next())
        {
            keys.Add(Convert.ToHexString(it.Key));
        }
        return keys;
    }

    [Theory]
    [InlineData("kvengine")]
    [InlineData("rocksdb")]
    public void PrefixSeekFlagsFindEveryWrittenKeyThroughPrefixOnlyFilters(string engine)
    {
        // fillseq writes every key of db_bench's -keys_per_prefix layout; seekrandom's targets are
        // the same keys, so all are found through the prefix-only filters, and the tables are checked.
        (int code, string stdout, string stderr) = Run(
            $"-engine={engine}", $"-db={Path.Combine(_dir.FullName, "db")}", "-benchmarks=fillseq,flush,seekrandom",
            "-num=4000", "-reads=2000", "-prefix_size=8", "-keys_per_prefix=10", "-bloom_bits=10", "-whole_key_filtering=0",
            "-prefix_same_as_start=1", "-seek_nexts=3", "-statistics=1");
        Assert.True(code == 0, stderr);
        Assert.Matches(@"seekrandom\s*:.*\(2000 of 2000 found\)", stdout);
        if (engine == "kvengine")
        {
            // (RocksDB 8+ counts seeks' filter checks under other tickers: rocksdb.*.seek.filtered.)
            Assert.Matches(@"rocksdb.bloom.filter.prefix.checked COUNT : [1-9]", stdout);
        }

        (code, _, stderr) = Run($"-db={Path.Combine(_dir.FullName, "db2")}", "-benchmarks=seekrandom", "-prefix_size=8", "-seek_missing_prefix=1");
        Assert.NotEqual(0, code);
        Assert.Contains("seek_missing_prefix", stderr, StringComparison.Ordinal);
    }

    private static (int Code, string Stdout, string Stderr) Run(params string[] args)
    {
        var psi = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        psi.ArgumentList.Add(KvBenchPath());
        foreach (string a in args)
        {
            psi.ArgumentList.Add(a);
        }
        using Process p = Process.Start(psi)!;
        Task<string> stdout = p.StandardOutput.ReadToEndAsync();
        Task<string> stderr = p.StandardError.ReadToEndAsync();
        Assert.True(p.WaitForExit(TimeSpan.FromSeconds(120)), "kvbench did not finish in 120 s");
        return (p.ExitCode, stdout.Result, stderr.Result);
    }

    private static string KvBenchPath()
    {
        var dir = new DirectoryInfo(AppContext.BaseDirectory); // tests/KvEngine.Tests/bin/<cfg>/net10.0/
        string config = dir.Parent!.Name;
        string root = dir.Parent!.Parent!.Parent!.Parent!.Parent!.FullName;
        string path = Path.Combine(root, "benchmarks", "KvEngine.DbBench", "bin", config, "net10.0", "kvbench.dll");
        Assert.True(File.Exists(path), $"kvbench not built at {path}");
        return path;
    }
}
