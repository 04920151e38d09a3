using KvEngine.Tests.Db;
using KvEngine.Tests.Wal;

namespace KvEngine.Tests.Interop;

/// <summary>
/// Databases written by RocksDB 7.8 (db_bench: flushed and compacted tables on several levels,
/// bottommost sequence numbers zeroed, OPTIONS/LOG/IDENTITY files, a WAL tail; ldb: puts, deletes
/// and batches left in the WAL) opened by KvEngine: full forward and backward scans must equal
/// <c>ldb scan</c>, sampled point reads must agree, and files KvEngine does not know must stay.
/// </summary>
public sealed class KvEngineReadsRocksDbTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-interop-theirs-");

    public void Dispose() => _dir.Delete(recursive: true);

    /// <summary>ldb flushes recovered WAL data at every open; RocksDB's default, Snappy, is not ours.</summary>
    private const string Lz4 = "--compression_type=lz4";

    public static TheoryData<string, string[]> DbBenchCases() => new()
    {
        {
            "snappy-default-compression",
            ["-benchmarks=fillrandom,overwrite", "-num=10000", "-compression_type=snappy", "-bloom_bits=10",
             "-write_buffer_size=131072"]
        },
        {
            "zlib-read-only-codec",
            ["-benchmarks=fillrandom", "-num=6000", "-compression_type=zlib", "-write_buffer_size=131072"]
        },
        {
            "lz4-xxh3-fill-overwrite-delete",
            ["-benchmarks=fillrandom,overwrite,deleterandom", "-num=20000", "-deletes=4000", "-compression_type=lz4",
             "-bloom_bits=10", "-write_buffer_size=262144"]
        },
        {
            "zstd-crc32c-multilevel",
            // waitforcompaction: RocksDB's own compactions must have reached level 2 (with the
            // bottommost sequence numbers zeroed) before the fixture is used, however loaded the machine.
            ["-benchmarks=fillrandom,overwrite,waitforcompaction", "-num=15000", "-compression_type=zstd", "-checksum_type=1",
             "-bloom_bits=10", "-write_buffer_size=131072", "-target_file_size_base=131072",
             "-max_bytes_for_level_base=393216", "-level0_file_num_compaction_trigger=2", "-value_size=60"]
        },
        {
            "none-nofilter-fillseq",
            ["-benchmarks=fillseq,deleteseq", "-num=8000", "-deletes=3000", "-compression_type=none", "-bloom_bits=0",
             "-write_buffer_size=65536", "-key_size=10"]
        },
        {
            "format3-legacy-bloom-crc32c",
            ["-benchmarks=fillrandom", "-num=6000", "-format_version=3", "-checksum_type=1", "-compression_type=lz4",
             "-bloom_bits=10", "-write_buffer_size=65536"]
        },
        {
            "format2-xxhash32-lz4hc-restart1",
            ["-benchmarks=fillrandom,overwrite", "-num=4000", "-format_version=2", "-checksum_type=2", "-compression_type=lz4hc",
             "-block_restart_interval=1", "-index_shortening_mode=2", "-bloom_bits=10", "-write_buffer_size=65536"]
        },
        {
            "format4-xxhash64-zstd19-16k-blocks",
            ["-benchmarks=fillrandom,overwrite", "-num=4000", "-format_version=4", "-checksum_type=3", "-compression_type=zstd",
             "-compression_level=19", "-block_size=16384", "-optimize_filters_for_memory=true", "-bloom_bits=10",
             "-write_buffer_size=65536"]
        },
        {
            "no-checksum-large-values",
            ["-benchmarks=fillrandom,overwrite", "-num=300", "-value_size=70000", "-checksum_type=0", "-compression_type=lz4",
             "-write_buffer_size=1048576"]
        },
        {
            "hash-index-first-key-ribbon",
            ["-benchmarks=fillrandom,overwrite", "-num=6000", "-use_data_block_hash_index=true", "-index_with_first_key=true",
             "-use_ribbon_filter=true", "-bloom_bits=10", "-block_restart_interval=4", "-enable_index_compression=false",
             "-index_shortening_mode=0", "-compression_type=zstd", "-write_buffer_size=65536"]
        },
        {
            "prefix-only-filter",
            ["-benchmarks=fillrandom", "-num=6000", "-prefix_size=7", "-whole_key_filtering=false", "-bloom_bits=10",
             "-compression_type=lz4", "-write_buffer_size=65536"]
        },
        {
            "transaction-db-min-log-to-keep",
            ["-benchmarks=fillrandom", "-num=3000", "-transaction_db=true", "-compression_type=lz4", "-write_buffer_size=65536"]
        },
        {
            "wals-tracked-in-manifest",
            ["-benchmarks=fillrandom", "-num=3000", "-track_and_verify_wals_in_manifest=true", "-compression_type=lz4",
             "-write_buffer_size=65536"]
        },
        {
            "partitioned-index-and-filters",
            ["-benchmarks=fillrandom,overwrite", "-num=20000", "-partition_index_and_filters=true", "-metadata_block_size=512",
             "-bloom_bits=10", "-compression_type=lz4", "-write_buffer_size=262144"]
        },
        {
            "partitioned-4k-zstd-cached-pinned",
            ["-benchmarks=fillrandom", "-num=30000", "-partition_index_and_filters=true", "-cache_index_and_filter_blocks=true",
             "-pin_top_level_index_and_filter=true", "-bloom_bits=10", "-compression_type=zstd", "-write_buffer_size=1048576"]
        },
        {
            "partitioned-format3-restart4-crc32c",
            ["-benchmarks=fillrandom,overwrite", "-num=15000", "-partition_index_and_filters=true", "-metadata_block_size=400",
             "-format_version=3", "-index_block_restart_interval=4", "-checksum_type=1", "-bloom_bits=10", "-compression_type=zstd",
             "-write_buffer_size=262144"]
        },
        {
            "partitioned-format4-optimized-filters",
            ["-benchmarks=fillrandom", "-num=15000", "-partition_index_and_filters=true", "-metadata_block_size=1024",
             "-format_version=4", "-optimize_filters_for_memory=true", "-bloom_bits=10", "-index_shortening_mode=0",
             "-compression_type=none", "-write_buffer_size=262144"]
        },
        {
            "partitioned-index-only",
            ["-benchmarks=fillrandom", "-num=10000", "-partition_index=true", "-metadata_block_size=256", "-bloom_bits=10",
             "-compression_type=lz4", "-write_buffer_size=131072"]
        },
        {
            "universal-compaction",
            ["-benchmarks=fillrandom,overwrite", "-num=8000", "-compaction_style=1", "-compression_type=lz4",
             "-bloom_bits=10", "-write_buffer_size=65536"]
        },
    };

    [Theory]
    [MemberData(nameof(DbBenchCases))]
    public void OpensDbBenchDatabases(string name, string[] benchArgs)
    {
        string db = Path.Combine(_dir.FullName, name);
        RunDbBench(db, benchArgs);
        Assert.NotEmpty(Directory.GetFiles(db, "*.sst"));
        if (name.Contains("multilevel", StringComparison.Ordinal))
        {
            // Compaction output below level 1 whose sequence numbers RocksDB zeroed (bottommost).
            string dump = RocksDbOracle.ManifestDump(db);
            Assert.Contains("--- level 2 ---", dump, StringComparison.Ordinal);
            Assert.Matches(@"--- level 2 --- version# \d+ ---\n \d+:\d+\[0 \.\. 0\]", dump);
        }
        if (name.StartsWith("partitioned", StringComparison.Ordinal))
        {
            // The fixture really is two-level (and, unless index-only, with partitioned filters).
            string props = KvEngine.Tests.Table.RocksDbTools.Properties(Directory.GetFiles(db, "*.sst")[0]);
            Assert.Contains("rocksdb.block.based.table.index.type: 0x02000000", props, StringComparison.Ordinal);
            Assert.Matches(@"# index partitions: [1-9]", props);
        }
        AssertKvEngineAgreesWithLdb(db, expectSomeData: true);
    }

    [Fact]
    public void OpensLdbDatabaseWithDataInTheWal()
    {
        string db = Path.Combine(_dir.FullName, "ldb");
        RocksDbTools.RunOk("ldb", $"--db={db}", Lz4, "--create_if_missing", "put", "--hex", "0x00", "0xFF00");
        RocksDbTools.RunOk("ldb", $"--db={db}", Lz4, "batchput", "--hex", "0x0101", "0x", "0xFFFF", "0x0102", "0x61", "0x62");
        RocksDbTools.RunOk("ldb", $"--db={db}", Lz4, "put", "apple", "red");
        RocksDbTools.RunOk("ldb", $"--db={db}", Lz4, "put", "apple", "green");
        RocksDbTools.RunOk("ldb", $"--db={db}", Lz4, "delete", "a");
        RocksDbTools.RunOkWithInput("ldb", "put pear yellow\nput plum purple\ndelete pear\nput k3 v3\n", $"--db={db}", Lz4, "query");
        Assert.Contains(Directory.GetFiles(db, "*.log"), f => new FileInfo(f).Length > 0);
        Assert.NotEmpty(Directory.GetFiles(db, "LOG.old.*"));

        List<KeyValuePair<byte[], byte[]>> seen = AssertKvEngineAgreesWithLdb(db, expectSomeData: true);
        Assert.Equal(["00", "0101", "6170706C65", "6B33", "706C756D", "FFFF"], seen.Select(p => RocksDbOracle.Hex(p.Key)));
        Assert.Equal(["FF00", "", "677265656E", "7633", "707572706C65", "0102"], seen.Select(p => RocksDbOracle.Hex(p.Value)));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void OpensDatabaseWhoseColumnFamilyWasDropped(bool familyRecordsOnlyInWal)
    {
        string db = Path.Combine(_dir.FullName, "dropped-cf");
        RocksDbTools.RunOk("ldb", $"--db={db}", Lz4, "--create_if_missing", "put", "a", "1");
        RocksDbTools.RunOk("ldb", $"--db={db}", "create_column_family", "cf1");
        if (familyRecordsOnlyInWal)
        {
            // ldb loads the database's OPTIONS file: keep recovered WAL data unflushed, so the
            // family's record is still in a WAL when the family is dropped.
            foreach (string options in Directory.GetFiles(db, "OPTIONS-*"))
            {
                File.WriteAllText(options, File.ReadAllText(options)
                    .Replace("avoid_flush_during_recovery=false", "avoid_flush_during_recovery=true", StringComparison.Ordinal));
            }
        }
        RocksDbTools.RunOk("ldb", $"--db={db}", Lz4, "--column_family=cf1", "put", "ck", "cv");
        RocksDbTools.RunOk("ldb", $"--db={db}", Lz4, "put", "b", "2");
        RocksDbTools.RunOk("ldb", $"--db={db}", "drop_column_family", "cf1");
        Assert.Contains("ColumnFamilyDrop", RocksDbTools.RunOk("ldb", $"--db={db}", "manifest_dump", "--verbose"), StringComparison.Ordinal);

        List<KeyValuePair<byte[], byte[]>> seen = AssertKvEngineAgreesWithLdb(db, expectSomeData: true);
        Assert.Equal(["a", "b"], seen.Select(p => System.Text.Encoding.ASCII.GetString(p.Key)));

        // KvEngine's MANIFEST keeps max_column_family, so RocksDB never reuses the dropped id.
        Assert.Contains("max_column_family 1", RocksDbOracle.ManifestDump(db), StringComparison.Ordinal);
        RocksDbOracle.AssertSameContents(seen, RocksDbOracle.Scan(db), "ldb after KvEngine");
    }

    internal static void RunDbBench(string db, IEnumerable<string> benchArgs)
    {
        string[] args = [$"-db={db}", "-seed=1", "-threads=1", "-compression_ratio=0.5", "-statistics=false", .. benchArgs];
        RocksDbTools.RunOk("db_bench", args);
    }

    /// <summary>
    /// Opens <paramref name="db"/> with KvEngine and checks it sees exactly what <c>ldb scan</c> sees
    /// (forward, backward, point reads, absent keys), leaving files it does not know in place.
    /// </summary>
    private static List<ulong> OptionsNumbers(string db) =>
        Directory.GetFiles(db, "OPTIONS-*").Select(f => KvEngine.OptionsFile.OptionsFileNames.TryParse(Path.GetFileName(f), out ulong n, out bool temp) && !temp ? n : 0)
            .Where(n => n > 0).ToList();

    internal static List<KeyValuePair<byte[], byte[]>> AssertKvEngineAgreesWithLdb(string db, bool expectSomeData)
    {
        List<KeyValuePair<byte[], byte[]>> expected = RocksDbOracle.Scan(db);
        Assert.True(!expectSomeData || expected.Count > 0, "ldb scan found nothing");
        string[] foreign = Directory.GetFiles(db)
            .Select(Path.GetFileName)
            .Where(n => n!.StartsWith("LOG", StringComparison.Ordinal))
            .ToArray()!;
        ulong rocksDbOptions = OptionsNumbers(db).DefaultIfEmpty().Max();

        using (KvDb kv = KvDb.Open(db, new KvOptions { CreateIfMissing = false }))
        {
            RocksDbOracle.AssertSameContents(expected, RocksDbOracle.ForwardScan(kv), "KvEngine forward scan");
            RocksDbOracle.AssertSameContents(expected, RocksDbOracle.BackwardScan(kv), "KvEngine backward scan");
            AssertPointReads(kv, expected);
        }
        foreach (string name in foreign)
        {
            Assert.True(File.Exists(Path.Combine(db, name)), $"KvEngine deleted {name}, which is RocksDB's");
        }
        // KvEngine wrote a newer OPTIONS file at open and, as RocksDB does, kept the two newest.
        List<ulong> options = OptionsNumbers(db);
        Assert.InRange(options.Count, 1, KvEngine.OptionsFile.OptionsFileStore.FilesKept);
        Assert.True(options.Max() > rocksDbOptions, "KvEngine's OPTIONS file is not the newest");

        // Reopened from the MANIFEST and tables KvEngine wrote at recovery: still the same, for
        // KvEngine and for RocksDB.
        using (KvDb kv = KvDb.Open(db, new KvOptions { CreateIfMissing = false }))
        {
            RocksDbOracle.AssertSameContents(expected, RocksDbOracle.ForwardScan(kv), "KvEngine after reopen");
        }
        RocksDbOracle.AssertSameContents(expected, RocksDbOracle.Scan(db), "ldb after KvEngine rewrote the MANIFEST");
        return expected;
    }

    private static void AssertPointReads(KvDb kv, List<KeyValuePair<byte[], byte[]>> expected)
    {
        var rng = new Random(7);
        List<byte[]> keys = expected.ConvertAll(p => p.Key);
        int samples = Math.Min(expected.Count, 400);
        for (int i = 0; i < samples; i++)
        {
            KeyValuePair<byte[], byte[]> p = expected[samples == expected.Count ? i : rng.Next(expected.Count)];
            byte[]? value = kv.Get(p.Key);
            Assert.True(value != null, $"Get({RocksDbOracle.Hex(p.Key)}) found nothing");
            Assert.True(value.AsSpan().SequenceEqual(p.Value), $"Get({RocksDbOracle.Hex(p.Key)}) returned a different value");

            // A key just past a live key, absent unless it is the next live key.
            byte[] probe = [.. p.Key, 0x00];
            int at = keys.BinarySearch(probe, ByteArrayComparer.Instance);
            byte[]? got = kv.Get(probe);
            if (at >= 0)
            {
                Assert.Equal(expected[at].Value, got);
            }
            else
            {
                Assert.True(got == null, $"Get({RocksDbOracle.Hex(probe)}) found a value ldb does not list");
            }
        }
    }
}
