namespace KvEngine.Tests.Db;

/// <summary>
/// Values far above a block: whatever Put acknowledges flushes, compacts, survives a reopen and
/// reads back in every codec; what the engine cannot carry is refused at Put with
/// <see cref="ArgumentException"/>, before anything is acknowledged.
/// </summary>
public class LargeValueTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-large-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Theory]
    [InlineData(KvCompressionType.Snappy)]
    [InlineData(KvCompressionType.Lz4)]
    [InlineData(KvCompressionType.Zstd)]
    public void A300MiBValueIsReadableAfterFlushCompactionAndReopen(KvCompressionType compression)
    {
        byte[] value = new byte[300 << 20];
        for (int i = 0; i < value.Length; i += 4096)
        {
            value[i] = (byte)(i >> 12);
            value[i + 1] = (byte)(i >> 20);
        }
        string path = Path.Combine(_dir.FullName, compression.ToString());
        var options = new KvOptions { Compression = compression };
        using (KvDb db = KvDb.Open(path, options))
        {
            db.Put("before"u8, "small"u8);
            db.Put("big"u8, value, new WriteOptions { Sync = true });
            db.Put("zafter"u8, "small"u8);
            Assert.True(value.AsSpan().SequenceEqual(db.Get("big"u8)));
        }
        using (KvDb db = KvDb.Open(path, options)) // the WAL replays the 300 MiB record
        {
            Assert.True(value.AsSpan().SequenceEqual(db.Get("big"u8)));
            db.Flush();
            Assert.True(value.AsSpan().SequenceEqual(db.Get("big"u8)));
            db.CompactRange(null, null);
            Assert.True(value.AsSpan().SequenceEqual(db.Get("big"u8)));
            db.Put("next"u8, "write"u8); // no background error: the database still takes writes
            db.Flush();
        }
        using (KvDb db = KvDb.Open(path, options))
        {
            Assert.True(value.AsSpan().SequenceEqual(db.Get("big"u8)));
            Assert.Equal("small"u8.ToArray(), db.Get("zafter"u8));
            Assert.Equal("write"u8.ToArray(), db.Get("next"u8));
            using KvIterator it = db.NewIterator();
            it.Seek("big"u8);
            Assert.True(it.Valid);
            Assert.True(value.AsSpan().SequenceEqual(it.Value));
        }
    }

    [Fact]
    public void AWriteAboveMaxEntrySizeIsRefusedAtPut()
    {
        byte[] value = new byte[WriteBatch.MaxEntrySize - 2];
        using KvDb db = KvDb.Open(Path.Combine(_dir.FullName, "db"));
        var e = Assert.Throws<ArgumentException>(() => db.Put("key"u8, value)); // 3 + MaxEntrySize - 2 bytes
        Assert.Contains("MaxEntrySize", e.Message, StringComparison.Ordinal);
        using var batch = new WriteBatch();
        Assert.Throws<ArgumentException>(() => batch.Put("key"u8, value));
        Assert.Equal(0, batch.Count);
        Assert.Null(db.Get("key"u8));
        db.Put("k"u8, "v"u8);
        Assert.Equal("v"u8.ToArray(), db.Get("k"u8));
    }

    /// <summary>
    /// One batch of 5,000 values of 1,100 bytes into 32 KiB write buffers (4 KiB arena blocks: every
    /// value over a quarter block): the memtable takes it whole (such values share the arena's side
    /// blocks instead of taking one of its 4,095 id slots each, which once failed the write after
    /// ~4,000 of them and then every reopen, replaying it), it flushes and survives reopens.
    /// </summary>
    [Fact]
    public void ABatchOfManyMediumValuesFitsASmallMemTable()
    {
        string path = Path.Combine(_dir.FullName, "medium");
        var options = new KvOptions { WriteBufferSize = 32 << 10 };
        static byte[] ValueOf(int i)
        {
            var v = new byte[1100];
            Array.Fill(v, (byte)i);
            v[0] = (byte)(i >> 8);
            return v;
        }
        using (KvDb db = KvDb.Open(path, options))
        {
            using var batch = new WriteBatch();
            for (int i = 0; i < 5000; i++)
            {
                batch.Put(System.Text.Encoding.ASCII.GetBytes($"k{i:D5}"), ValueOf(i));
            }
            db.Write(batch, new WriteOptions { Sync = true });
            Assert.Equal(ValueOf(4321), db.Get("k04321"u8));
        }
        using (KvDb db = KvDb.Open(path, options)) // replays the batch into a memtable of the same size
        {
            Assert.Equal(ValueOf(17), db.Get("k00017"u8));
            db.Flush();
        }
        using (KvDb db = KvDb.Open(path, options))
        {
            for (int i = 0; i < 5000; i += 499)
            {
                Assert.Equal(ValueOf(i), db.Get(System.Text.Encoding.ASCII.GetBytes($"k{i:D5}")));
            }
        }
    }
}
