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
}
