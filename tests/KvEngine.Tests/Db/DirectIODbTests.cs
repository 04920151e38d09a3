using System.Text;
using KvEngine.Tests.Storage;

namespace KvEngine.Tests.Db;

/// <summary>
/// A whole database with UseDirectReads and UseDirectIoForFlushAndCompaction: puts, deletes and
/// overwrites through many flushes and compactions and a reopen read the same as a model, every
/// table is written with direct I/O, every table read goes through a direct-I/O file, and the
/// options round-trip through the OPTIONS file.
/// </summary>
public sealed class DirectIODbTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-directdb-");

    public void Dispose() => _dir.Delete(recursive: true);

    private static byte[] Key(int i) => Encoding.ASCII.GetBytes($"key{i:D7}");

    [Fact]
    public void ADirectIODatabaseThroughFlushesCompactionsAndReopenReadsAsTheModel()
    {
        string path = Path.Combine(_dir.FullName, "db");
        var fs = new CountingFileSystem();
        var options = new KvOptions
        {
            FileSystem = fs,
            UseDirectReads = true,
            UseDirectIoForFlushAndCompaction = true,
            CompactionReadaheadSize = 64 << 10,
            WriteBufferSize = 96 << 10,
            TargetFileSizeBase = 128 << 10,
            MaxBytesForLevelBase = 512 << 10,
            Level0FileNumCompactionTrigger = 2,
            BlockCache = new KvBlockCache(256 << 10),
        };
        var model = new SortedDictionary<byte[], byte[]>(ByteArrayComparer.Instance);
        var rng = new Random(42);
        using (KvDb db = KvDb.Open(path, options))
        {
            for (int i = 0; i < 40_000; i++)
            {
                byte[] key = Key(rng.Next(8_000));
                if (rng.Next(10) == 0)
                {
                    db.Delete(key);
                    model.Remove(key);
                }
                else
                {
                    var value = new byte[rng.Next(1, 300)]; // odd sizes: blocks and tables end anywhere in a sector
                    rng.NextBytes(value);
                    db.Put(key, value);
                    model[key] = value;
                }
            }
            db.Flush();
            db.CompactRange(null, null);
            AssertSame(db, model);
        }
        Assert.NotEmpty(fs.DirectWrites); // flushes and compactions wrote their tables directly
        Assert.All(fs.DirectWrites, p => Assert.EndsWith(".sst", p, StringComparison.Ordinal));
        using (KvDb db = KvDb.Open(path, options))
        {
            AssertSame(db, model);
            for (int i = 0; i < 500; i++)
            {
                byte[] key = Key(rng.Next(8_000));
                Assert.Equal(model.TryGetValue(key, out byte[]? v) ? v : null, db.Get(key));
            }
        }
        List<(string Path, long Offset, int Length, bool Direct)> tableReads = fs.ReadsOf(".sst");
        Assert.NotEmpty(tableReads);
        Assert.All(tableReads, r => Assert.True(r.Direct, $"{r.Path} was read buffered"));
        KvOptions loaded = KvOptions.LoadLatest(path);
        Assert.True(loaded.UseDirectReads);
        Assert.True(loaded.UseDirectIoForFlushAndCompaction);
        Assert.Equal(64 << 10, loaded.CompactionReadaheadSize);
    }

    private static void AssertSame(KvDb db, SortedDictionary<byte[], byte[]> model)
    {
        using KvIterator it = db.NewIterator();
        it.SeekToFirst();
        foreach (KeyValuePair<byte[], byte[]> e in model)
        {
            Assert.True(it.Valid, $"iterator ended before {Encoding.ASCII.GetString(e.Key)}");
            Assert.Equal(e.Key, it.Key.ToArray());
            Assert.Equal(e.Value, it.Value.ToArray());
            it.Next();
        }
        Assert.False(it.Valid);
    }
}
