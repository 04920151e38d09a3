using System.Text;
using KvEngine.Tests.Db;
using KvEngine.Tests.Interop;
using KvEngine.Tests.Wal;

namespace KvEngine.Tests.Compaction;

/// <summary>
/// Universal compaction between KvEngine and RocksDB 7.8: a database db_bench wrote with
/// <c>-compaction_style=1</c> opens with the options of its OPTIONS file (universal, with its
/// settings), reads as ldb reads it and keeps compacting under universal compaction; RocksDB's
/// ldb then reads ours, loading our OPTIONS file (universal) too.
/// </summary>
public sealed class UniversalInteropTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-universal-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Fact]
    public void DbBenchUniversalDatabaseOpensReadsAndKeepsCompacting()
    {
        string db = Path.Combine(_dir.FullName, "db");
        KvEngineReadsRocksDbTests.RunDbBench(db, ["-benchmarks=fillrandom,overwrite", "-num=20000", "-compaction_style=1",
            "-universal_size_ratio=5", "-universal_max_merge_width=10", "-universal_max_size_amplification_percent=150",
            "-universal_allow_trivial_move=true", "-universal_compression_size_percent=80", "-level0_file_num_compaction_trigger=3",
            "-compression_type=lz4", "-write_buffer_size=65536", "-key_size=16", "-value_size=100"]);
        List<KeyValuePair<byte[], byte[]>> expected = RocksDbOracle.Scan(db);
        Assert.NotEmpty(expected);

        KvOptions options = KvOptions.LoadLatest(db);
        Assert.Equal(CompactionStyle.Universal, options.CompactionStyle);
        CompactionOptionsUniversal u = options.CompactionOptionsUniversal;
        Assert.Equal((5, 10, 150, 80, true, CompactionStopStyle.TotalSize),
            (u.SizeRatio, u.MaxMergeWidth, u.MaxSizeAmplificationPercent, u.CompressionSizePercent, u.AllowTrivialMove, u.StopStyle));
        options.CreateIfMissing = false;

        var model = new SortedDictionary<byte[], byte[]>(ByteArrayComparer.Instance);
        foreach (KeyValuePair<byte[], byte[]> e in expected)
        {
            model[e.Key] = e.Value;
        }
        using (KvDb kv = KvDb.Open(db, options))
        {
            CompactionModelTests.CheckScan(kv, model, null, "as db_bench left it");
            long before = kv.Counters.Compactions;
            var rng = new Random(5);
            for (int i = 0; i < 20_000; i++)
            {
                byte[] key = expected[rng.Next(expected.Count)].Key;
                byte[] value = Encoding.ASCII.GetBytes($"kv{i}-" + new string((char)('a' + i % 26), rng.Next(20, 120)));
                if (i % 17 == 0)
                {
                    kv.Delete(key);
                    model.Remove(key);
                }
                else
                {
                    kv.Put(key, value);
                    model[key] = value;
                }
            }
            CompactionTestUtil.WaitForCompactions(kv);
            Assert.True(kv.Counters.Compactions - before > 3, $"only {kv.Counters.Compactions - before} compactions ran");
            Assert.True(CompactionTestUtil.Files(kv, 6) > 0, "nothing in the last level");
            CompactionModelTests.CheckScan(kv, model, null, "after KvEngine's compactions");
        }

        RocksDbOracle.AssertConsistent(db);
        RocksDbOracle.AssertTablesVerify(db);
        List<KeyValuePair<byte[], byte[]>> mine = RocksDbOracle.ToList(model);
        RocksDbOracle.AssertSameContents(mine, RocksDbOracle.Scan(db), "ldb scan of KvEngine's database");
        // RocksDB loads our OPTIONS file (universal and its settings) and compacts under it.
        string copy = RocksDbOracle.Copy(db, "universal-options");
        try
        {
            RocksDbTools.RunOk("ldb", $"--db={copy}", "--try_load_options", "compact");
            RocksDbOracle.AssertSameContents(mine, RocksDbOracle.Scan(copy), "ldb after RocksDB's compaction under our OPTIONS");
            Assert.Contains("compaction_style=kCompactionStyleUniversal", File.ReadAllText(Directory.GetFiles(copy, "OPTIONS-*").Max()!),
                StringComparison.Ordinal);
        }
        finally
        {
            Directory.Delete(copy, recursive: true);
        }
    }
}
