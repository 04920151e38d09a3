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

    private static void Ldb(string db, params string[] args) =>
        RocksDbTools.RunOk("ldb", [$"--db={db}", "--compression_type=lz4", "--auto_compaction=false", .. args]);
}
