using KvEngine.Tests.Compression;

namespace KvEngine.Tests.Interop;

/// <summary>
/// Zstandard frames of the default level come from our match finder and ZstdSharp's sequence
/// encoder: RocksDB 7.8 (libzstd) must decode every one of them, for values of every shape from a
/// few bytes to several Zstandard blocks (128 KiB each), in data blocks and after its own compaction.
/// </summary>
public sealed class ZstdInteropTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-interop-zstd-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Fact]
    public void RocksDbDecodesOurDefaultLevelFramesOfEveryShape()
    {
        string db = Path.Combine(_dir.FullName, "db");
        // No automatic compaction: the table count below must not depend on when one runs.
        var options = new KvOptions { Compression = KvCompressionType.Zstd, WriteBufferSize = 1 << 20, DisableAutoCompactions = true };
        var model = RocksDbOracle.NewModel();
        int[] sizes = [1, 13, 100, 400, 3000, 5000, 20_000, 140_000, 300_000];
        using (KvDb kv = KvDb.Open(db, options))
        {
            int n = 0;
            for (int round = 0; round < 3; round++)
            {
                foreach (int size in sizes)
                {
                    for (int shape = 0; shape < CodecTestData.Shapes; shape++)
                    {
                        byte[] key = System.Text.Encoding.ASCII.GetBytes($"k{shape}-{size:D7}-{round}");
                        byte[] value = CodecTestData.Data(size, shape, n++);
                        kv.Put(key, value);
                        model[key] = value;
                    }
                }
                kv.Flush();
            }
        }
        Assert.True(Directory.GetFiles(db, "*.sst").Length >= 3);
        RocksDbOracle.AssertSameContents(RocksDbOracle.ToList(model), RocksDbOracle.Scan(db), "ldb scan");
        RocksDbOracle.AssertSameContents(RocksDbOracle.ToList(model), RocksDbOracle.ScanAfterCompaction(db), "ldb scan after ldb compact");
        RocksDbOracle.AssertTablesVerify(db);
    }
}
