using KvEngine.Storage;
using KvEngine.Table;
using KvEngine.Tests.Table;

namespace KvEngine.Tests.Interop;

/// <summary>
/// RocksDB's data-block hash index across the two engines: tables KvEngine writes with
/// <see cref="KvDataBlockIndexType.BinaryAndHash"/> pass RocksDB 7.8's sst_dump check and answer
/// ldb's point lookups (which go through RocksDB's hash lookup, so every bucket must be where
/// RocksDB's hash puts it), and tables db_bench writes with <c>-use_data_block_hash_index=1</c>
/// answer KvEngine's Gets and MultiGets through ours.
/// </summary>
public sealed class DataBlockHashIndexInteropTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-interop-hash-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Fact]
    public void RocksDbReadsOurHashIndexedTables()
    {
        string db = Path.Combine(_dir.FullName, "ours");
        var options = new KvOptions
        {
            WriteBufferSize = 256 << 10,
            Compression = KvCompressionType.Lz4,
            BlockSize = 2048,
            DataBlockIndexType = KvDataBlockIndexType.BinaryAndHash,
            DataBlockHashTableUtilRatio = 0.5,
            DisableAutoCompactions = true,
        };
        var work = new InteropWorkload(seed: 42, poolSize: 4000);
        using (KvDb kv = KvDb.Open(db, options))
        {
            for (int round = 0; round < 3; round++)
            {
                work.Apply(kv, 4000);
                kv.Flush();
            }
            kv.CompactRange(null, null);
            AssertKvEngineAnswers(kv, work.Model, Absent(work.Model));
        }
        string optionsFile = File.ReadAllText(Directory.GetFiles(db, "OPTIONS-*").Order(StringComparer.Ordinal).Last());
        Assert.Contains("data_block_index_type=kDataBlockBinaryAndHash", optionsFile, StringComparison.Ordinal);
        Assert.Contains("data_block_hash_table_util_ratio=0.500000", optionsFile, StringComparison.Ordinal);

        string[] tables = Directory.GetFiles(db, "*.sst");
        Assert.NotEmpty(tables);
        foreach (string table in tables)
        {
            RocksDbTools.AssertSstDumpCheckPasses(table);
            (int hashed, int blocks) = CountHashedBlocks(table);
            Assert.True(hashed == blocks && blocks > 10, $"{table}: {hashed} of {blocks} data blocks carry the hash index");
        }

        // RocksDB's Gets: every live key's value (ldb's session stops at a miss, so the present
        // keys go in one session and each absent key in its own).
        var keys = work.Model.Keys.ToList();
        List<byte[]?> values = RocksDbOracle.Get(db, keys);
        Assert.Equal(keys.Count, values.Count);
        for (int i = 0; i < keys.Count; i++)
        {
            Assert.True(values[i] != null && values[i]!.AsSpan().SequenceEqual(work.Model[keys[i]]), $"ldb get {RocksDbOracle.Hex(keys[i])}");
        }
        foreach (byte[] absent in Absent(work.Model).Take(4))
        {
            Assert.Equal([null], RocksDbOracle.Get(db, [absent]));
        }
        RocksDbOracle.AssertSameContents(RocksDbOracle.ToList(work.Model), RocksDbOracle.Scan(db), "ldb scan");
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void WeReadRocksDbsHashIndexedTables(bool hashIndex)
    {
        string db = Path.Combine(_dir.FullName, "theirs");
        (int rc, string stdout, string stderr) = RocksDbTools.Run("db_bench",
        [
            "-benchmarks=fillrandom,overwrite,compact", "-num=20000", "-value_size=60", "-compression_type=lz4", $"-db={db}",
            "-bloom_bits=10", "-write_buffer_size=262144", "-seed=11", "-block_size=2048",
            $"-use_data_block_hash_index={(hashIndex ? 1 : 0)}", "-data_block_hash_table_util_ratio=0.6",
        ], 180_000);
        Assert.True(rc == 0, $"db_bench failed ({rc}): {stdout} {stderr}");
        string[] tables = Directory.GetFiles(db, "*.sst");
        Assert.NotEmpty(tables);
        foreach (string table in tables)
        {
            (int hashed, int blocks) = CountHashedBlocks(table);
            Assert.True(blocks > 0 && hashed == (hashIndex ? blocks : 0), $"{table}: {hashed} of {blocks} data blocks carry the hash index");
        }

        var model = RocksDbOracle.NewModel();
        foreach (KeyValuePair<byte[], byte[]> kv in RocksDbOracle.Scan(db))
        {
            model[kv.Key] = kv.Value;
        }
        Assert.True(model.Count > 10000, $"only {model.Count} keys");
        using KvDb ours = KvDb.Open(RocksDbOracle.Copy(db, "kv"), new KvOptions());
        AssertKvEngineAnswers(ours, model, Absent(model));
    }

    /// <summary>Every key of <paramref name="model"/> through Get and one MultiGet, and every absent key missing from both.</summary>
    private static void AssertKvEngineAnswers(KvDb kv, SortedDictionary<byte[], byte[]> model, IReadOnlyList<byte[]> absent)
    {
        var keys = new List<ReadOnlyMemory<byte>>();
        foreach ((byte[] key, byte[] value) in model)
        {
            Assert.Equal(value, kv.Get(key));
            keys.Add(key);
        }
        foreach (byte[] key in absent)
        {
            Assert.True(kv.Get(key) == null, "absent key " + RocksDbOracle.Hex(key) + " found");
            keys.Add(key);
        }
        using var results = new MultiGetResults();
        kv.MultiGet(keys.ToArray(), results);
        for (int i = 0; i < keys.Count; i++)
        {
            byte[]? expected = i < model.Count ? model[keys[i].ToArray()] : null;
            Assert.Equal(expected, results.ToArray(i));
        }
    }

    /// <summary>Keys next to each live key that are not live themselves (one byte added or the last one removed), and keys past both ends.</summary>
    private static List<byte[]> Absent(SortedDictionary<byte[], byte[]> model)
    {
        var absent = new List<byte[]>();
        foreach (byte[] end in new[] { Array.Empty<byte>(), new byte[] { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF } })
        {
            if (!model.ContainsKey(end))
            {
                absent.Add(end);
            }
        }
        int i = 0;
        foreach (byte[] key in model.Keys)
        {
            if (i++ % 7 != 0 || key.Length == 0)
            {
                continue;
            }
            foreach (byte[] candidate in new[] { [.. key, 0], key[..^1] })
            {
                if (!model.ContainsKey(candidate))
                {
                    absent.Add(candidate);
                }
            }
        }
        return absent;
    }

    /// <summary>(data blocks with the hash index, data blocks) of the table at <paramref name="path"/>, read through its index.</summary>
    private static (int Hashed, int Blocks) CountHashedBlocks(string path)
    {
        using TableReader reader = TableReader.Open(LocalFileSystem.Instance.OpenRandomAccess(path), new FileInfo(path).Length, new TableOptions(), path);
        BlockLease index = reader.AcquireIndex(fillCache: false);
        BlockCursor cursor = reader.NewIndexCursor(index.Block);
        int hashed = 0;
        int blocks = 0;
        try
        {
            for (cursor.SeekToFirst(); cursor.Valid; cursor.Next())
            {
                BlockLease data = reader.ReadDataBlock(cursor.Handle, verifyChecksum: true, fillCache: false);
                hashed += data.Block.HashBucketCount > 0 ? 1 : 0;
                blocks++;
                data.Release();
            }
        }
        finally
        {
            cursor.Dispose();
            index.Release();
        }
        return (hashed, blocks);
    }
}
