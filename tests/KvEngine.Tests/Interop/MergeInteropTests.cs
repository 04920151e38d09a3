using KvEngine.Tests.Wal;
using SstTools = KvEngine.Tests.Table.RocksDbTools;

namespace KvEngine.Tests.Interop;

/// <summary>
/// Merge operands between RocksDB 7.8 and KvEngine, both ways. RocksDB to KvEngine: a database
/// db_bench writes with <c>-merge_operator=uint64add</c> (operands in tables and in the WAL) reads
/// in KvEngine, with <see cref="UInt64AddOperator"/>, exactly as <c>ldb scan</c> reads it (ldb
/// loads the OPTIONS file, so it merges with uint64add too), before and after KvEngine compacts
/// it, and RocksDB still reads KvEngine's compaction output; without an operator, or with another
/// one, KvEngine refuses it. KvEngine to RocksDB: our tables hold the operands as RocksDB's
/// type-2 records with the operator's name in <c>rocksdb.merge.operator</c> (sst_dump), and ldb,
/// which merges with string-append ':' when a database has no OPTIONS file, reads a KvEngine
/// database written with <c>StringAppendOperator(':')</c> exactly as the model says.
/// </summary>
public sealed class MergeInteropTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-interop-merge-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Fact]
    public void DbBenchUInt64AddDatabaseReadsAsLdbReadsIt()
    {
        string db = Path.Combine(_dir.FullName, "uint64add");
        KvEngineReadsRocksDbTests.RunDbBench(db, ["-benchmarks=fillrandom,mergerandom", "-merge_operator=uint64add", "-value_size=8",
            "-num=6000", "-write_buffer_size=32768", "-compression_type=lz4", "-target_file_size_base=32768", "-max_bytes_for_level_base=131072",
            "-disable_auto_compactions=1"]); // no compaction racing the run: its level-0 tables keep their operands
        List<KeyValuePair<byte[], byte[]>> expected = RocksDbOracle.Scan(db);
        Assert.NotEmpty(expected);
        int tablesWithOperands = Directory.GetFiles(db, "*.sst").Count(f => SstTools.Properties(f).Contains("merge operator name: UInt64AddOperator", StringComparison.Ordinal) &&
            !SstTools.Properties(f).Contains("# merge operands: 0\n", StringComparison.Ordinal));
        Assert.True(tablesWithOperands > 0, "db_bench wrote no table holding merge operands");

        var options = new KvOptions { CreateIfMissing = false, MergeOperator = UInt64AddOperator.Instance };
        using (KvDb kv = KvDb.Open(db, options))
        {
            RocksDbOracle.AssertSameContents(expected, RocksDbOracle.ForwardScan(kv), "forward scan");
            RocksDbOracle.AssertSameContents(expected, RocksDbOracle.BackwardScan(kv), "backward scan");
            foreach (KeyValuePair<byte[], byte[]> e in expected)
            {
                Assert.Equal(e.Value, kv.Get(e.Key));
            }
            kv.CompactRange(null, null);
            RocksDbOracle.AssertSameContents(expected, RocksDbOracle.ForwardScan(kv), "forward scan after compaction");
        }
        // RocksDB reads what KvEngine's compaction wrote (full merges at the bottom: plain values now).
        RocksDbOracle.AssertSameContents(expected, RocksDbOracle.Scan(db), "ldb scan after KvEngine's compaction");
    }

    [Fact]
    public void DbBenchMergeDatabaseIsRefusedWithoutTheSameOperator()
    {
        string db = Path.Combine(_dir.FullName, "refused");
        KvEngineReadsRocksDbTests.RunDbBench(db, ["-benchmarks=mergerandom", "-merge_operator=uint64add", "-value_size=8", "-num=3000",
            "-write_buffer_size=32768", "-compression_type=lz4"]);
        Assert.NotEmpty(RocksDbOracle.Scan(db));

        KvException none = Assert.ThrowsAny<KvException>(() =>
        {
            using KvDb kv = KvDb.Open(db, new KvOptions { CreateIfMissing = false });
            RocksDbOracle.ForwardScan(kv);
        });
        Assert.Contains("merge_operator is not properly initialized", none.Message, StringComparison.Ordinal);

        KvException other = Assert.ThrowsAny<KvException>(() =>
        {
            using KvDb kv = KvDb.Open(db, new KvOptions { CreateIfMissing = false, MergeOperator = new StringAppendOperator() });
            RocksDbOracle.ForwardScan(kv);
        });
        Assert.Contains("UInt64AddOperator", other.Message, StringComparison.Ordinal);
        Assert.Contains("StringAppendOperator", other.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void OurTablesHoldRocksDbMergeRecordsAndOperatorName()
    {
        string db = Path.Combine(_dir.FullName, "ours-uint64");
        using (KvDb kv = KvDb.Open(db, new KvOptions { MergeOperator = UInt64AddOperator.Instance, Compression = KvCompressionType.None }))
        {
            kv.Put("a"u8, UInt64AddOperator.Encode(10));
            kv.Merge("a"u8, UInt64AddOperator.Encode(5));
            kv.Merge("b"u8, UInt64AddOperator.Encode(7));
            kv.Flush();
            Assert.Equal(UInt64AddOperator.Encode(15), kv.Get("a"u8));
            Assert.Equal(UInt64AddOperator.Encode(7), kv.Get("b"u8));
        }
        string table = Assert.Single(Directory.GetFiles(db, "*.sst"));
        string props = SstTools.Properties(table);
        Assert.Contains("merge operator name: UInt64AddOperator", props, StringComparison.Ordinal);
        Assert.Contains("# merge operands: 1\n", props, StringComparison.Ordinal);
        // As RocksDB's flush: a's operand meets its base and is full-merged into a value at the
        // operand's sequence number; b's operand has no base in the memtable and stays an operand.
        List<(string Key, ulong Seq, int Type, string Value)> entries = SstTools.Scan(table);
        Assert.Equal([("61", 2UL, 1, "0F00000000000000"), ("62", 3UL, 2, "0700000000000000")], entries);
    }

    [Fact]
    public void LdbReadsOurStringAppendDatabase()
    {
        string db = Path.Combine(_dir.FullName, "ours-append");
        var model = RocksDbOracle.NewModel();
        var rng = new Random(17);
        var options = new KvOptions { MergeOperator = new StringAppendOperator((byte)':'), WriteBufferSize = 16 << 10, Compression = KvCompressionType.Lz4 };
        using (KvDb kv = KvDb.Open(db, options))
        {
            for (int i = 0; i < 4000; i++)
            {
                byte[] key = System.Text.Encoding.ASCII.GetBytes($"key{rng.Next(300):D4}");
                byte[] value = System.Text.Encoding.ASCII.GetBytes($"v{i}");
                int dice = rng.Next(10);
                if (dice < 2)
                {
                    kv.Put(key, value);
                    model[key] = value;
                }
                else if (dice < 3)
                {
                    kv.Delete(key);
                    model.Remove(key);
                }
                else
                {
                    kv.Merge(key, value);
                    model[key] = model.TryGetValue(key, out byte[]? old) ? [.. old, (byte)':', .. value] : value;
                }
                if (i == 2500)
                {
                    kv.CompactRange(null, null); // some operands merged by us, the rest in level 0 and the WAL
                }
            }
        }
        // ldb takes the operator from the OPTIONS file we wrote: string-append with ':'.
        Assert.Contains("merge_operator={id=StringAppendOperator;delimiter=\\:;}", File.ReadAllText(Directory.GetFiles(db, "OPTIONS-*").Max()!), StringComparison.Ordinal);
        RocksDbOracle.AssertSameContents(RocksDbOracle.ToList(model), RocksDbOracle.Scan(db), "ldb scan");
        RocksDbOracle.AssertSameContents(RocksDbOracle.ToList(model), RocksDbOracle.ScanAfterCompaction(db), "ldb scan after ldb compact");
    }
}
