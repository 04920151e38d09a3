using KvEngine.Tests.Wal;

namespace KvEngine.Tests.Interop;

/// <summary>
/// RocksDB 7.8 writes a database, KvEngine opens it, adds and overwrites keys and deletes some of
/// RocksDB's, and RocksDB (ldb scan, checkconsistency, sst_dump) then sees exactly the union; then
/// RocksDB writes again and KvEngine sees that too.
/// </summary>
public sealed class RoundTripTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-interop-roundtrip-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Theory]
    [InlineData(KvCompressionType.Lz4, KvChecksumType.XxHash3)]
    [InlineData(KvCompressionType.Zstd, KvChecksumType.Crc32C)]
    public void RocksDbThenKvEngineThenRocksDb(KvCompressionType compression, KvChecksumType checksum)
    {
        string db = Path.Combine(_dir.FullName, "db");
        KvEngineReadsRocksDbTests.RunDbBench(db,
        [
            "-benchmarks=fillrandom,overwrite", "-num=6000", "-compression_type=lz4", "-bloom_bits=10",
            "-write_buffer_size=65536", "-target_file_size_base=65536", "-max_bytes_for_level_base=196608",
            "-level0_file_num_compaction_trigger=2",
        ]);
        var work = new InteropWorkload(seed: 5 + (int)compression, poolSize: 1500);
        work.Load(RocksDbOracle.Scan(db));
        int rocksDbKeys = work.Model.Count;
        Assert.True(rocksDbKeys > 1000, $"db_bench left only {rocksDbKeys} keys");

        var options = new KvOptions
        {
            CreateIfMissing = false,
            WriteBufferSize = 32 << 10,
            Compression = compression,
            Checksum = checksum,
        };
        using (KvDb kv = KvDb.Open(db, options))
        {
            work.DeleteSome(kv, 0.2);
            work.Apply(kv, 3000);
            kv.Flush();
            work.Apply(kv, 1500);
            RocksDbOracle.AssertSameContents(RocksDbOracle.ToList(work.Model), RocksDbOracle.ForwardScan(kv), "KvEngine before close");
        }
        Assert.Contains(Directory.GetFiles(db, "*.log"), f => new FileInfo(f).Length > 0);

        RocksDbOracle.AssertSameContents(RocksDbOracle.ToList(work.Model), RocksDbOracle.Scan(db), "ldb scan of the union");
        RocksDbOracle.AssertConsistent(db);
        RocksDbOracle.AssertTablesVerify(db);
        RocksDbOracle.ManifestDump(db);

        // RocksDB writes on top of what we wrote (it replays our WAL, flushes, may compact our
        // tables with its own), then KvEngine reads the result.
        RocksDbTools.RunOk("ldb", $"--db={db}", "--compression_type=lz4", "put", "--hex", "0x00FF", "0x0102");
        RocksDbTools.RunOk("ldb", $"--db={db}", "--compression_type=lz4", "compact");
        work.Model[[0x00, 0xFF]] = [0x01, 0x02];
        List<KeyValuePair<byte[], byte[]>> final = KvEngineReadsRocksDbTests.AssertKvEngineAgreesWithLdb(db, expectSomeData: true);
        RocksDbOracle.AssertSameContents(RocksDbOracle.ToList(work.Model), final, "after RocksDB compacted");
    }
}
