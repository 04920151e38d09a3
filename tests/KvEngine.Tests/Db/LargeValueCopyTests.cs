using System.Buffers;
using KvEngine.Tests.Table;

namespace KvEngine.Tests.Db;

/// <summary>
/// A large value through a database: it round-trips through Put, Flush, a compaction that
/// rewrites it, Get, TryGet, an iterator and a WAL replay (and RocksDB's sst_dump reads the tables
/// that hold it), and the managed copies the write and read paths used to make of it are gone:
/// Put copies it into no managed array, Get allocates the result array and nothing else of its
/// size. Each allocation check runs on a thread of its own, so the thread-local buffers start
/// empty, and counts that thread's managed allocations (GC.GetAllocatedBytesForCurrentThread):
/// deterministic, whatever else runs.
/// </summary>
public class LargeValueCopyTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-largecopy-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Theory]
    [InlineData(KvCompressionType.None, false)]
    [InlineData(KvCompressionType.Snappy, false)]
    [InlineData(KvCompressionType.Snappy, true)]
    public void A64MiBValueRoundTripsThroughEveryPath(KvCompressionType compression, bool compressible)
    {
        byte[] value = MakeValue(64 << 20, compressible, seed: 1);
        byte[] walValue = MakeValue(24 << 20, compressible, seed: 2);
        string path = Path.Combine(_dir.FullName, "db");
        var options = new KvOptions { Compression = compression };
        using (KvDb db = KvDb.Open(path, options))
        {
            db.Put("big"u8, value);
            AssertValue(db, "big"u8, value);
            db.Flush();
            AssertValue(db, "big"u8, value);
            // A second L0 file overlapping the first, so the compaction reads and rewrites the value.
            db.Put("bi"u8, "small"u8);
            db.Put("bigger"u8, "small"u8);
            db.Flush();
            Assert.Equal("2", db.GetProperty("rocksdb.num-files-at-level0"));
            db.CompactRange(null, null);
            Assert.Equal("0", db.GetProperty("rocksdb.num-files-at-level0")); // two overlapping files: merged, not moved
            AssertValue(db, "big"u8, value);
            db.Put("wal"u8, walValue); // stays in the WAL only
        }
        foreach (string table in LiveTables(path))
        {
            RocksDbTools.AssertSstDumpCheckPasses(table);
        }
        using (KvDb db = KvDb.Open(path, options))
        {
            AssertValue(db, "wal"u8, walValue);
            AssertValue(db, "big"u8, value);
            Assert.Equal("small"u8.ToArray(), db.Get("bigger"u8));
        }
    }

    [Fact]
    public void PutCopiesALargeValueIntoNoManagedArray()
    {
        byte[] value = MakeValue(16 << 20, compressible: false, seed: 3);
        using KvDb db = KvDb.Open(Path.Combine(_dir.FullName, "put"));
        long allocated = OnNewThread(() =>
        {
            db.Put("warm"u8, "up"u8);
            long before = GC.GetAllocatedBytesForCurrentThread();
            db.Put("big"u8, value);
            return GC.GetAllocatedBytesForCurrentThread() - before;
        });
        Assert.True(allocated < value.Length / 16, $"Put allocated {allocated} managed bytes for a {value.Length}-byte value");
        Assert.True(value.AsSpan().SequenceEqual(db.Get("big"u8)));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void GetAllocatesOnlyTheResultForALargeValue(bool fromTable)
    {
        byte[] value = MakeValue(16 << 20, compressible: false, seed: 4);
        using KvDb db = KvDb.Open(Path.Combine(_dir.FullName, "get"), new KvOptions { Compression = KvCompressionType.None });
        db.Put("a"u8, "small"u8);
        db.Put("big"u8, value);
        if (fromTable)
        {
            db.Flush();
        }
        byte[]? got = null;
        long allocated = OnNewThread(() =>
        {
            Assert.NotNull(db.Get("a"u8)); // the thread's first read: its pools and buffers
            long before = GC.GetAllocatedBytesForCurrentThread();
            got = db.Get("big"u8);
            return GC.GetAllocatedBytesForCurrentThread() - before;
        });
        Assert.True(value.AsSpan().SequenceEqual(got));
        Assert.True(allocated < value.Length + (value.Length / 16), $"Get allocated {allocated} managed bytes for a {value.Length}-byte value");
    }

    private static void AssertValue(KvDb db, ReadOnlySpan<byte> key, byte[] value)
    {
        Assert.True(value.AsSpan().SequenceEqual(db.Get(key)), "Get");
        var writer = new ArrayBufferWriter<byte>(value.Length);
        Assert.True(db.TryGet(key, writer));
        Assert.True(value.AsSpan().SequenceEqual(writer.WrittenSpan), "TryGet");
        using KvIterator it = db.NewIterator();
        it.Seek(key);
        Assert.True(it.Valid && it.Key.SequenceEqual(key), "iterator");
        Assert.True(value.AsSpan().SequenceEqual(it.Value), "iterator value");
    }

    private static string[] LiveTables(string path) => Directory.GetFiles(path, "*.sst");

    private static byte[] MakeValue(int length, bool compressible, int seed)
    {
        byte[] value = new byte[length];
        var rng = new Random(seed);
        if (!compressible)
        {
            rng.NextBytes(value);
            return value;
        }
        for (int i = 0; i < length; i += 64)
        {
            value.AsSpan(i, Math.Min(64, length - i)).Fill((byte)rng.Next(8));
        }
        return value;
    }

    private static long OnNewThread(Func<long> body)
    {
        long result = 0;
        Exception? error = null;
        var thread = new Thread(() =>
        {
            try
            {
                result = body();
            }
            catch (Exception e)
            {
                error = e;
            }
        });
        thread.Start();
        thread.Join();
        if (error != null)
        {
            throw new InvalidOperationException("the measured thread failed", error);
        }
        return result;
    }
}
