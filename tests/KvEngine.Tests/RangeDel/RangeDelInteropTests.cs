using KvEngine.Tests.Interop;
using KvEngine.Tests.Wal;

namespace KvEngine.Tests.RangeDel;

/// <summary>
/// Range deletions across the two engines: KvEngine reads what RocksDB 7.8's ldb and db_bench
/// wrote with DeleteRange (in the WAL and in tables), and RocksDB's ldb and sst_dump read what
/// KvEngine wrote, seeing exactly the live keys.
/// </summary>
public sealed class RangeDelInteropTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-rangedel-interop-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Fact]
    public void ReadsRangeDeletionFromRocksDbWal()
    {
        string db = Path.Combine(_dir.FullName, "wal");
        Ldb(db, "--create_if_missing", "put", "a1", "x");
        Ldb(db, "put", "b1", "y");
        Ldb(db, "deleterange", "a", "b");
        Ldb(db, "put", "a2", "new");

        List<KeyValuePair<byte[], byte[]>> expected = RocksDbOracle.Scan(db);
        Assert.Equal(["a2", "b1"], expected.Select(e => System.Text.Encoding.ASCII.GetString(e.Key)));
        using KvDb kv = KvDb.Open(db, new KvOptions { CreateIfMissing = false });
        Assert.Null(kv.Get("a1"u8));
        Assert.Equal("new"u8.ToArray(), kv.Get("a2"u8));
        RocksDbOracle.AssertSameContents(expected, RocksDbOracle.ForwardScan(kv), "forward scan");
        RocksDbOracle.AssertSameContents(expected, RocksDbOracle.BackwardScan(kv), "backward scan");
    }

    [Fact]
    public void ReadsRangeDeletionFromRocksDbTable()
    {
        string db = Path.Combine(_dir.FullName, "table");
        Ldb(db, "--create_if_missing", "put", "a1", "x");
        Ldb(db, "put", "b1", "y");
        Ldb(db, "deleterange", "a", "b");
        Ldb(db, "put", "c1", "z");
        Ldb(db, "put", "zz", "last");
        List<KeyValuePair<byte[], byte[]>> expected = RocksDbOracle.Scan(db);
        Assert.Equal(["b1", "c1", "zz"], expected.Select(e => System.Text.Encoding.ASCII.GetString(e.Key)));

        using KvDb kv = KvDb.Open(db, new KvOptions { CreateIfMissing = false });
        Assert.Null(kv.Get("a1"u8));
        RocksDbOracle.AssertSameContents(expected, RocksDbOracle.ForwardScan(kv), "forward scan");
        RocksDbOracle.AssertSameContents(expected, RocksDbOracle.BackwardScan(kv), "backward scan");
    }

    [Fact]
    public void RocksDbSeesExactlyOurLiveKeysThroughRangeDeletions()
    {
        string db = Path.Combine(_dir.FullName, "ours");
        var options = new KvOptions
        {
            WriteBufferSize = 32 << 10,
            Compression = KvCompressionType.Lz4,
            DisableAutoCompactions = true,
            TargetFileSizeBase = 4096,
            MaxBytesForLevelBase = 16384,
        };
        var model = RocksDbOracle.NewModel();
        var rng = new Random(12);
        using (KvDb kv = KvDb.Open(db, options))
        {
            for (int round = 0; round < 6; round++)
            {
                for (int i = 0; i < 600; i++)
                {
                    byte[] k = RangeDelModelTests.Key(rng.Next(2000));
                    byte[] v = new byte[rng.Next(10, 80)];
                    rng.NextBytes(v);
                    kv.Put(k, v);
                    model[k] = v;
                }
                for (int i = 0; i < 8; i++)
                {
                    int a = rng.Next(2000);
                    byte[] begin = RangeDelModelTests.Key(a);
                    byte[] end = RangeDelModelTests.Key(a + rng.Next(1, 60));
                    kv.DeleteRange(begin, end);
                    foreach (byte[] k in model.Keys.Where(k => k.AsSpan().SequenceCompareTo(begin) >= 0 && k.AsSpan().SequenceCompareTo(end) < 0).ToList())
                    {
                        model.Remove(k);
                    }
                }
                kv.Flush();
                if (round % 2 == 1)
                {
                    kv.Impl.RunCompactionsInline();
                }
            }
            // A table holding nothing but a range tombstone.
            int tablesBefore = Directory.GetFiles(db, "*.sst").Length;
            kv.DeleteRange(RangeDelModelTests.Key(500), RangeDelModelTests.Key(600));
            foreach (byte[] k in model.Keys.Where(k => k.AsSpan().SequenceCompareTo(RangeDelModelTests.Key(500)) >= 0 &&
                k.AsSpan().SequenceCompareTo(RangeDelModelTests.Key(600)) < 0).ToList())
            {
                model.Remove(k);
            }
            kv.Flush();
            Assert.Equal(tablesBefore + 1, Directory.GetFiles(db, "*.sst").Length);
            // A tail of puts and a range deletion only in the WAL: ldb must replay them.
            kv.Put(RangeDelModelTests.Key(5), "tail"u8);
            model[RangeDelModelTests.Key(5)] = "tail"u8.ToArray();
            kv.DeleteRange(RangeDelModelTests.Key(100), RangeDelModelTests.Key(200));
            foreach (byte[] k in model.Keys.Where(k => k.AsSpan().SequenceCompareTo(RangeDelModelTests.Key(100)) >= 0 &&
                k.AsSpan().SequenceCompareTo(RangeDelModelTests.Key(200)) < 0).ToList())
            {
                model.Remove(k);
            }
            Assert.NotEqual("0", kv.GetProperty("rocksdb.num-files-at-level1"));
        }

        RocksDbOracle.AssertSameContents(RocksDbOracle.ToList(model), RocksDbOracle.Scan(db), "ldb scan");
        RocksDbOracle.AssertSameContents(RocksDbOracle.ToList(model), RocksDbOracle.ScanAfterCompaction(db), "ldb scan after ldb compact");
        RocksDbOracle.AssertConsistent(db);
        // Our compactions cut tombstones at output boundaries too: RocksDB reads the sentinels.
        Assert.Contains("seq:72057594037927935, type:15]", RocksDbOracle.ManifestDump(db), StringComparison.Ordinal);
        Assert.True(RocksDbOracle.AssertTablesVerify(db) > 0);
        int withRangeDeletions = 0;
        foreach (string table in Directory.GetFiles(db, "*.sst"))
        {
            System.Text.RegularExpressions.Match m = System.Text.RegularExpressions.Regex.Match(
                Table.RocksDbTools.Properties(table), @"# range deletions: (\d+)");
            Assert.True(m.Success, "sst_dump printed no range-deletion count");
            withRangeDeletions += int.Parse(m.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture) > 0 ? 1 : 0;
        }
        Assert.True(withRangeDeletions > 0, "no table holds range deletions");

        using (KvDb kv = KvDb.Open(db, options))
        {
            RocksDbOracle.AssertSameContents(RocksDbOracle.ToList(model), RocksDbOracle.ForwardScan(kv), "KvEngine after reopen");
        }
    }

    [Theory]
    [InlineData("l0-tables-and-wal", true, new[] { "-benchmarks=fillrandom", "-num=6000", "-write_buffer_size=65536", "-disable_auto_compactions=true" })]
    [InlineData("compacted", false, new[] { "-benchmarks=fillrandom,compact", "-num=6000", "-write_buffer_size=65536" })]
    [InlineData("multilevel-truncated", true, new[] { "-benchmarks=fillrandom", "-num=30000", "-write_buffer_size=65536",
        "-target_file_size_base=32768", "-max_bytes_for_level_base=131072", "-range_tombstone_width=300",
        "-writes_per_range_tombstone=50", "-max_num_range_tombstones=600" })]
    [InlineData("wide-in-wal", false, new[] { "-benchmarks=fillrandom", "-num=3000", "-write_buffer_size=4194304", "-range_tombstone_width=500" })]
    public void OpensDbBenchDatabaseWithRangeTombstones(string name, bool tombstonesInTables, string[] benchArgs)
    {
        string db = Path.Combine(_dir.FullName, name);
        var args = new List<string>(benchArgs) { "-compression_type=lz4" };
        foreach (string flag in new[] { "-writes_per_range_tombstone=20", "-max_num_range_tombstones=200", "-range_tombstone_width=30" })
        {
            if (!args.Any(a => a.StartsWith(flag[..(flag.IndexOf('=') + 1)], StringComparison.Ordinal)))
            {
                args.Add(flag);
            }
        }
        Interop.KvEngineReadsRocksDbTests.RunDbBench(db, args);
        if (tombstonesInTables)
        {
            Assert.Contains(Directory.GetFiles(db, "*.sst"), t => !Table.RocksDbTools.Properties(t).Contains("# range deletions: 0", StringComparison.Ordinal));
        }
        if (name.StartsWith("multilevel", StringComparison.Ordinal))
        {
            // RocksDB's compaction cut tombstones at file boundaries: some largest keys are sentinels.
            Assert.Contains("seq:72057594037927935, type:15]", RocksDbOracle.ManifestDump(db), StringComparison.Ordinal);
        }
        Interop.KvEngineReadsRocksDbTests.AssertKvEngineAgreesWithLdb(db, expectSomeData: true);
    }

    private static void Ldb(string db, params string[] args) =>
        RocksDbTools.RunOk("ldb", [$"--db={db}", "--compression_type=lz4", "--auto_compaction=false", .. args]);
}
