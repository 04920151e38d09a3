using KvEngine.Tests.Wal;

namespace KvEngine.Tests.Interop;

/// <summary>
/// RocksDB 7.8 features KvEngine does not implement yet. Opening or reading such a database must
/// raise a <see cref="KvException"/> that names the feature — never a crash, never a wrong answer
/// (for example blob references read as plain values). Range deletions and merge operands are supported: see
/// RangeDel/RangeDelInteropTests and <see cref="MergeInteropTests"/>.
/// </summary>
public sealed class UnsupportedRocksDbFeaturesTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-interop-unsupported-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Theory]
    [InlineData("blob", "blob", new[] { "-compression_type=lz4", "-enable_blob_files=true", "-min_blob_size=50" })]
    [InlineData("wal-zstd", "wal_compression", new[] { "-compression_type=lz4", "-wal_compression=zstd" })]
    [InlineData("num-levels-10", "num_levels", new[] { "-compression_type=lz4", "-num_levels=10", "-level_compaction_dynamic_level_bytes=true",
        "-benchmarks=fillrandom,overwrite", "-num=6000", "-max_bytes_for_level_base=131072", "-target_file_size_base=65536" })]
    [InlineData("user-timestamps", "u64ts", new[] { "-compression_type=lz4", "-user_timestamp_size=8" })]
    [InlineData("two-phase-commit", "two-phase-commit", new[] { "-compression_type=lz4", "-transaction_db=true",
        "-benchmarks=randomtransaction", "-transaction_sets=2" })]
    public void DbBenchDatabaseWithUnsupportedFeatureRaisesKvException(string name, string feature, string[] benchArgs)
    {
        string db = Path.Combine(_dir.FullName, name);
        string[] args = ["-benchmarks=fillrandom", "-num=3000", "-write_buffer_size=65536", .. benchArgs];
        KvEngineReadsRocksDbTests.RunDbBench(db, args);
        if (name != "user-timestamps")
        {
            // A valid database: RocksDB reads it (ldb scan cannot read timestamped keys).
            Assert.NotEmpty(RocksDbOracle.Scan(db));
        }

        KvException e = Assert.ThrowsAny<KvException>(() =>
        {
            using KvDb kv = KvDb.Open(db, new KvOptions { CreateIfMissing = false });
            RocksDbOracle.ForwardScan(kv);
        });
        Assert.Contains(feature, e.Message, StringComparison.OrdinalIgnoreCase);
    }
}
