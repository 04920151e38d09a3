using System.Globalization;
using System.Text;
using KvEngine.Storage;
using KvEngine.Util;
using KvEngine.Wal;

namespace KvEngine.Tests.Wal;

/// <summary>
/// WALs written by RocksDB 7.8 (ldb, db_bench) read by our LogReader and WriteBatch decoder, and
/// WALs we wrote read by `ldb dump_wal`; both sides compared line by line.
/// </summary>
public sealed class RocksDbWalInteropTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-wal-");

    public void Dispose() => _dir.Delete(recursive: true);

    private string DbPath(string name) => Path.Combine(_dir.FullName, name);

    private static string NewestLog(string db) =>
        Directory.GetFiles(db, "*.log").OrderBy(f => f, StringComparer.Ordinal).Last();

    // Our reading of a WAL, formatted as `ldb dump_wal --print_value` prints it.
    private static List<string> OurDump(string walPath)
    {
        byte[] log = File.ReadAllBytes(walPath);
        var reader = new LogReader(new InMemorySequentialFile(log), WalRecoveryMode.AbsoluteConsistency, fileName: walPath);
        using var scratch = new ByteBuffer();
        var lines = new List<string>();
        while (reader.TryReadRecord(scratch, out ReadOnlySpan<byte> record))
        {
            int count = WriteBatchDecoder.Validate(record);
            var handler = new LdbLineHandler();
            WriteBatchDecoder.Iterate(record, ref handler);
            lines.Add(string.Create(CultureInfo.InvariantCulture,
                $"{Coding.DecodeFixed64(record)},{count},{record.Length},{reader.LastRecordOffset},{handler.Text}"));
        }
        Assert.False(reader.StoppedOnCorruption);
        return lines;
    }

    private static List<string> LdbDump(string walPath)
    {
        string output = RocksDbTools.RunOk("ldb", "dump_wal", $"--walfile={walPath}", "--header", "--print_value");
        return output.Split('\n')
            .Where(l => l.Length > 0 && !l.StartsWith("Sequence,", StringComparison.Ordinal))
            .ToList();
    }

    // Same sequence, count, size and writes. RocksDB reports a record's offset from where its
    // reader stood, which can be up to 6 bytes early when a zero block trailer precedes the record;
    // ours points at the header itself.
    private static void AssertSameDump(List<string> ldb, List<string> ours)
    {
        Assert.Equal(ldb.Count, ours.Count);
        for (int i = 0; i < ldb.Count; i++)
        {
            string[] theirs = ldb[i].Split(',', 5);
            string[] mine = ours[i].Split(',', 5);
            Assert.Equal(theirs[0..3], mine[0..3]);
            Assert.Equal(theirs[4], mine[4]);
            long theirOffset = long.Parse(theirs[3], CultureInfo.InvariantCulture);
            long myOffset = long.Parse(mine[3], CultureInfo.InvariantCulture);
            Assert.InRange(myOffset, theirOffset, theirOffset + LogFormat.HeaderSize - 1);
        }
    }

    [Fact]
    public void ReadsAWalOfAnLdbSession()
    {
        string db = DbPath("query");
        RocksDbTools.RunOk("ldb", $"--db={db}", "--create_if_missing", "put", "seed", "x");
        RocksDbTools.RunOkWithInput("ldb", "put a 1\nput b 2\ndelete a\nput k3 hello\n", $"--db={db}", "query");

        List<string> ours = OurDump(NewestLog(db));
        Assert.Equal(4, ours.Count);
        Assert.Equal("2,1,17,0,PUT(0) : 0x61 : 0x31 ", ours[0]);
        Assert.Equal("4,1,15,48,DELETE(0) : 0x61 ", ours[2]);
        AssertSameDump(LdbDump(NewestLog(db)), ours);
    }

    [Fact]
    public void ReadsAMultiBlockWalOfDbBench()
    {
        string db = DbPath("bench");
        RocksDbTools.RunOk(
            "db_bench", "--benchmarks=fillseq,deleteseq", "--num=60", "--value_size=1500", "--key_size=16",
            $"--db={db}", "--compression_type=none", "--batch_size=3", "--seed=1", "--disable_auto_compactions=1");
        string wal = NewestLog(db);
        Assert.True(new FileInfo(wal).Length > 2 * LogFormat.BlockSize);

        List<string> ours = OurDump(wal);
        Assert.Equal(40, ours.Count); // 20 batches of 3 puts, 20 of 3 deletes
        AssertSameDump(LdbDump(wal), ours);
    }

    [Fact]
    public void ReadsARangeDeletionAndAnotherColumnFamily()
    {
        string db = DbPath("range");
        RocksDbTools.RunOk("ldb", $"--db={db}", "--create_if_missing", "put", "seed", "x");
        RocksDbTools.RunOk("ldb", $"--db={db}", "deleterange", "a", "c");
        List<string> ours = OurDump(NewestLog(db));
        Assert.Equal(new[] { "2,1,17,0,DELETE_RANGE(0) : 0x61 0x63 " }, ours);
        AssertSameDump(LdbDump(NewestLog(db)), ours);

        RocksDbTools.RunOk("ldb", $"--db={db}", "create_column_family", "cf1");
        RocksDbTools.RunOk("ldb", $"--db={db}", "--column_family=cf1", "put", "ck", "cv");
        string wal = NewestLog(db);
        Assert.Contains("PUT(1) : 0x636B : 0x6376", LdbDump(wal)[0], StringComparison.Ordinal);
        AssertSameDump(LdbDump(wal), OurDump(wal));
    }

    /// <summary>
    /// A database whose writes are only in its memory-mapped WAL, copied while open (what a kill
    /// leaves: the records, then the reserved zeros): RocksDB 7.8 recovers every write from it
    /// (ldb scan replays the WAL), and ldb dump_wal lists every batch without an error.
    /// </summary>
    [Fact]
    public void RocksDbRecoversEveryWriteFromAMappedWalAsAKillLeavesIt()
    {
        string db = DbPath("mapped");
        var expected = new SortedDictionary<byte[], byte[]>(Comparer<byte[]>.Create((a, b) => a.AsSpan().SequenceCompareTo(b)));
        using KvDb kv = KvDb.Open(db, new KvOptions { WriteBufferSize = 64 << 20, MemoryMappedWal = true });
        for (int i = 0; i < 3000; i++)
        {
            byte[] key = Encoding.ASCII.GetBytes($"key{i % 2500:D5}");
            byte[] value = LogTestUtil.Payload(i * 31 % 900, i);
            kv.Put(key, value);
            expected[key] = value;
        }
        string wal = Directory.GetFiles(db, "*.log").Single();
        Assert.Equal(0, new FileInfo(wal).Length % LocalMappedWritableFile.WindowSize); // open: records, then zeros

        Interop.RocksDbOracle.AssertSameContents(expected.ToList(), Interop.RocksDbOracle.Scan(db), "ldb scan of the copy");
        string copy = Interop.RocksDbOracle.Copy(db, "dumpwal");
        string dump = RocksDbTools.RunOk("ldb", "dump_wal", $"--walfile={Path.Combine(copy, Path.GetFileName(wal))}", "--header");
        Assert.Equal(3000, dump.Split('\n').Count(l => l.Contains("PUT(0)", StringComparison.Ordinal)));
    }

    [Fact]
    public void LdbReadsAWalWeWrote()
    {
        string wal = Path.Combine(_dir.FullName, "000042.log");
        var expected = new List<string>();
        using (var file = new LocalWritableFile(wal))
        {
            var writer = new LogWriter(file);
            ulong sequence = 1;
            for (int i = 0; i < 30; i++)
            {
                using var batch = new WriteBatch();
                var text = new StringBuilder();
                batch.Put(Encoding.ASCII.GetBytes($"key{i:D3}"), LogTestUtil.Payload(i * 97 % 3000, i));
                if (i % 3 == 0)
                {
                    batch.Delete(Encoding.ASCII.GetBytes($"gone{i}"));
                }
                if (i % 7 == 0)
                {
                    batch.Put(Encoding.ASCII.GetBytes("big"), LogTestUtil.Payload(70_000, i)); // spans blocks
                }
                if (i == 5)
                {
                    batch.SingleDelete(Encoding.ASCII.GetBytes("once"));
                    batch.Merge(Encoding.ASCII.GetBytes("counter"), new byte[] { 1 });
                    batch.DeleteRange(Encoding.ASCII.GetBytes("a"), Encoding.ASCII.GetBytes("b"));
                    batch.Put(Encoding.ASCII.GetBytes("empty"), ReadOnlySpan<byte>.Empty);
                }
                batch.Sequence = sequence;
                var handler = new LdbLineHandler();
                batch.Iterate(ref handler);
                expected.Add(string.Create(CultureInfo.InvariantCulture,
                    $"{sequence},{batch.Count},{batch.ApproximateSize},{file.Size},{handler.Text}"));
                writer.AddRecord(batch.Data);
                sequence += (ulong)batch.Count;
            }
            file.Sync();
        }

        (int code, string stdout, string stderr) = RocksDbTools.Run("ldb", null, "dump_wal", $"--walfile={wal}", "--header", "--print_value");
        Assert.Equal(0, code);
        Assert.DoesNotContain("orruption", stdout + stderr, StringComparison.Ordinal);
        AssertSameDump(LdbDump(wal), expected);
        AssertSameDump(expected, OurDump(wal));
    }
}
