using KvEngine.Storage;

namespace KvEngine.Tests.Db;

/// <summary>
/// Misuse of the public API gets the documented exception and leaves the database usable: bad
/// options and null arguments (ArgumentException family), use after Dispose
/// (ObjectDisposedException), foreign snapshots (ArgumentException), a second instance, missing or
/// unexpectedly existing databases (KvException), unpositioned iterators (InvalidOperationException).
/// </summary>
public sealed class ApiMisuseTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-misuse-");

    public void Dispose() => _dir.Delete(recursive: true);

    public static TheoryData<string> BadOptions() => new()
    {
        "WriteBufferSize=4095", "WriteBufferSize=0", "WriteBufferSize=-1",
        "BlockSize=0", "BlockSize=-4096",
        "BlockRestartInterval=0",
        "BloomBitsPerKey=-1", "BloomBitsPerKey=NaN", "BloomBitsPerKey=101",
        "MaxWriteBufferNumber=1", "MaxWriteBufferNumber=0",
        "Compression=99", "Checksum=99", "WalRecoveryMode=99", "WalRecoveryMode=-1",
        "FileSystem=null",
        "IndexType=1", "IndexType=3", "MetadataBlockSize=0", "PartitionPinning=4", "PartitionPinning=-1", "MetadataCacheOptions=null",
    };

    [Theory]
    [MemberData(nameof(BadOptions))]
    public void BadOptionsAreArgumentErrorsAndCreateNothing(string setting)
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        var o = new KvOptions { FileSystem = fs };
        string[] parts = setting.Split('=');
        switch (parts[0])
        {
            case "WriteBufferSize": o.WriteBufferSize = long.Parse(parts[1], System.Globalization.CultureInfo.InvariantCulture); break;
            case "BlockSize": o.BlockSize = int.Parse(parts[1], System.Globalization.CultureInfo.InvariantCulture); break;
            case "BlockRestartInterval": o.BlockRestartInterval = int.Parse(parts[1], System.Globalization.CultureInfo.InvariantCulture); break;
            case "BloomBitsPerKey": o.BloomBitsPerKey = double.Parse(parts[1], System.Globalization.CultureInfo.InvariantCulture); break;
            case "MaxWriteBufferNumber": o.MaxWriteBufferNumber = int.Parse(parts[1], System.Globalization.CultureInfo.InvariantCulture); break;
            case "Compression": o.Compression = (KvCompressionType)int.Parse(parts[1], System.Globalization.CultureInfo.InvariantCulture); break;
            case "Checksum": o.Checksum = (KvChecksumType)int.Parse(parts[1], System.Globalization.CultureInfo.InvariantCulture); break;
            case "WalRecoveryMode": o.WalRecoveryMode = (WalRecoveryMode)int.Parse(parts[1], System.Globalization.CultureInfo.InvariantCulture); break;
            case "FileSystem": o.FileSystem = null!; break;
            case "IndexType": o.IndexType = (KvIndexType)int.Parse(parts[1], System.Globalization.CultureInfo.InvariantCulture); break;
            case "MetadataBlockSize": o.MetadataBlockSize = int.Parse(parts[1], System.Globalization.CultureInfo.InvariantCulture); break;
            case "PartitionPinning": o.MetadataCacheOptions.PartitionPinning = (KvPinningTier)int.Parse(parts[1], System.Globalization.CultureInfo.InvariantCulture); break;
            case "MetadataCacheOptions": o.MetadataCacheOptions = null!; break;
            default: throw new ArgumentException(setting);
        }
        Assert.ThrowsAny<ArgumentException>(() => KvDb.Open(DbTestUtil.DbPath, o).Dispose());
        Assert.False(fs.DirectoryExists(DbTestUtil.DbPath), "a rejected open created the database directory");
        // The same options object, fixed, opens: validation did not stick to it.
        o = new KvOptions { FileSystem = fs };
        KvDb.Open(DbTestUtil.DbPath, o).Dispose();
    }

    [Fact]
    public void NullArgumentsAreArgumentNullErrors()
    {
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, new KvOptions { FileSystem = DbTestUtil.NewFs() });
        Assert.Throws<ArgumentNullException>(() => db.Write(null!));
        Assert.Throws<ArgumentNullException>(() => db.WriteAsync(null!));
        Assert.Throws<ArgumentNullException>(() => db.TryGet("k"u8, null!));
        Assert.Throws<ArgumentNullException>(() => db.GetProperty(null!));
        Assert.Throws<ArgumentNullException>(() => KvDb.Open(null!));
        Assert.ThrowsAny<ArgumentException>(() => KvDb.Open(""));
        // Still usable.
        db.Put("k"u8, "v"u8);
        Assert.Equal("v"u8.ToArray(), db.Get("k"u8));
    }

    [Fact]
    public async Task SyncWithoutWalIsAnArgumentError()
    {
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, new KvOptions { FileSystem = DbTestUtil.NewFs() });
        var bad = new WriteOptions { Sync = true, DisableWal = true };
        Assert.ThrowsAny<ArgumentException>(() => db.Put("k"u8, "v"u8, bad));
        Assert.ThrowsAny<ArgumentException>(() => db.Delete("k"u8, bad));
        await Assert.ThrowsAnyAsync<ArgumentException>(() => db.PutAsync("k"u8.ToArray(), "v"u8.ToArray(), bad).AsTask());
        Assert.Null(db.Get("k"u8));
        db.Put("k"u8, "v"u8, new WriteOptions { Sync = true });
        Assert.Equal("v"u8.ToArray(), db.Get("k"u8));
    }

    [Fact]
    public async Task DisposedWriteBatchIsRefusedAndTheDatabaseGoesOn()
    {
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, new KvOptions { FileSystem = DbTestUtil.NewFs() });
        var batch = new WriteBatch();
        batch.Put("a"u8, "1"u8);
        batch.Dispose();
        Assert.Throws<ObjectDisposedException>(() => db.Write(batch));
        await Assert.ThrowsAsync<ObjectDisposedException>(() => db.WriteAsync(batch).AsTask());
        // The writer queue is not stuck behind the refused request.
        Task put = Task.Run(() => db.Put("b"u8, "2"u8));
        Assert.Same(put, await Task.WhenAny(put, Task.Delay(TimeSpan.FromSeconds(10))));
        Assert.Equal("2"u8.ToArray(), db.Get("b"u8));
        Assert.Null(db.Get("a"u8));
    }

    [Fact]
    public async Task EveryDatabaseMemberThrowsAfterDispose()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        KvDb db = KvDb.Open(DbTestUtil.DbPath, new KvOptions { FileSystem = fs });
        db.Put("k"u8, "v"u8);
        db.Dispose();
        db.Dispose(); // idempotent
        await db.DisposeAsync();
        IReadOnlyList<string> files = fs.GetChildren(DbTestUtil.DbPath);
        int syncs = fs.SyncCount;
        using var batch = new WriteBatch();
        batch.Put("x"u8, "y"u8);
        var sink = new System.Buffers.ArrayBufferWriter<byte>();
        Assert.Throws<ObjectDisposedException>(() => db.Put("k"u8, "v"u8));
        Assert.Throws<ObjectDisposedException>(() => db.Delete("k"u8));
        Assert.Throws<ObjectDisposedException>(() => db.Write(batch));
        Assert.Throws<ObjectDisposedException>(() => db.TryGet("k"u8, sink));
        Assert.Throws<ObjectDisposedException>(() => db.Get("k"u8));
        Assert.Throws<ObjectDisposedException>(() => db.GetSnapshot());
        Assert.Throws<ObjectDisposedException>(() => db.NewIterator());
        Assert.Throws<ObjectDisposedException>(() => db.Flush());
        Assert.Throws<ObjectDisposedException>(() => db.GetProperty("rocksdb.num-files-at-level0"));
        await Assert.ThrowsAsync<ObjectDisposedException>(() => db.PutAsync("k"u8.ToArray(), "v"u8.ToArray()).AsTask());
        await Assert.ThrowsAsync<ObjectDisposedException>(() => db.DeleteAsync("k"u8.ToArray()).AsTask());
        await Assert.ThrowsAsync<ObjectDisposedException>(() => db.WriteAsync(batch).AsTask());
        await Assert.ThrowsAsync<ObjectDisposedException>(() => db.GetAsync("k"u8.ToArray()).AsTask());
        await Assert.ThrowsAsync<ObjectDisposedException>(() => db.FlushAsync().AsTask());
        await Assert.ThrowsAsync<ObjectDisposedException>(async () =>
        {
            await foreach (KeyValuePair<byte[], byte[]> _ in db.ScanAsync(default, default))
            {
            }
        });
        Assert.Throws<ObjectDisposedException>(() => db.LatestSequenceNumber);
        // None of the refused calls touched the files.
        Assert.Equal(files, fs.GetChildren(DbTestUtil.DbPath));
        Assert.Equal(syncs, fs.SyncCount);
    }

    [Fact]
    public async Task FlushAfterDisposeWritesNothing()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        KvDb db = KvDb.Open(DbTestUtil.DbPath, new KvOptions { FileSystem = fs });
        db.Put("k"u8, "v"u8);
        db.Dispose();
        IReadOnlyList<string> before = fs.GetChildren(DbTestUtil.DbPath);
        Assert.Throws<ObjectDisposedException>(() => db.Flush());
        Assert.Equal(before, fs.GetChildren(DbTestUtil.DbPath));
        KvDb again = KvDb.Open(DbTestUtil.DbPath, new KvOptions { FileSystem = fs });
        Assert.Equal("v"u8.ToArray(), again.Get("k"u8));
        // Also with an empty memtable, where a forced switch has nothing to do.
        again.Flush();
        again.Dispose();
        Assert.Throws<ObjectDisposedException>(() => again.Flush());
        await Assert.ThrowsAsync<ObjectDisposedException>(() => again.FlushAsync().AsTask());
    }

    [Fact]
    public void EveryIteratorMemberThrowsAfterDispose()
    {
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, new KvOptions { FileSystem = DbTestUtil.NewFs() });
        db.Put("k"u8, "v"u8);
        KvIterator it = db.NewIterator();
        it.SeekToFirst();
        Assert.True(it.Valid);
        it.Dispose();
        it.Dispose(); // idempotent
        Assert.Throws<ObjectDisposedException>(() => it.Valid);
        Assert.Throws<ObjectDisposedException>(() => it.Key.Length);
        Assert.Throws<ObjectDisposedException>(() => it.Value.Length);
        Assert.Throws<ObjectDisposedException>(() => it.SeekToFirst());
        Assert.Throws<ObjectDisposedException>(() => it.SeekToLast());
        Assert.Throws<ObjectDisposedException>(() => it.Seek("k"u8));
        Assert.Throws<ObjectDisposedException>(() => it.SeekForPrev("k"u8));
        Assert.Throws<ObjectDisposedException>(() => it.Next());
        Assert.Throws<ObjectDisposedException>(() => it.Prev());
        Assert.Throws<ObjectDisposedException>(() => it.Refresh());
    }

    /// <summary>
    /// A KvIterator names one lease of a pooled cursor: the next iterator takes the cursor a
    /// disposed one left, and the old handle (or any copy of it) must then neither reach nor
    /// dispose the new iterator. Copies of a live handle are the same iterator. default is disposed.
    /// </summary>
    [Fact]
    public void AStaleIteratorHandleNeverReachesTheIteratorThatReusedItsCursor()
    {
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, new KvOptions { FileSystem = DbTestUtil.NewFs() });
        db.Put("a"u8, "1"u8);
        db.Put("b"u8, "2"u8);
        KvIterator first = db.NewIterator();
        KvIterator copy = first;
        first.SeekToFirst();
        copy.Next(); // the same iterator: moves first too
        Assert.Equal("b", DbTestUtil.S(first.Key));
        Assert.True(first == copy);
        first.Dispose();

        using KvIterator second = db.NewIterator(); // takes the cursor first left in the pool
        Assert.False(second == first);
        second.SeekToFirst();
        copy.Dispose(); // a second Dispose of the first iterator, through a copy: nothing happens
        first.Dispose();
        Assert.True(second.Valid);
        Assert.Equal("a", DbTestUtil.S(second.Key));
        Assert.Throws<ObjectDisposedException>(() => first.SeekToLast());
        Assert.Throws<ObjectDisposedException>(() => copy.Valid);
        second.Next();
        Assert.Equal("b", DbTestUtil.S(second.Key));

        KvIterator none = default;
        Assert.Throws<ObjectDisposedException>(() => none.Valid);
        Assert.Throws<ObjectDisposedException>(() => none.Seek("a"u8));
        none.Dispose();
    }

    /// <summary>
    /// An iterator left open past its database's Dispose may go on over what it pinned or throw
    /// ObjectDisposedException (its table files are closed); nothing else.
    /// </summary>
    [Fact]
    public void IteratorOutlivingItsDatabaseFailsCleanly()
    {
        KvDb db = KvDb.Open(Path.Combine(_dir.FullName, "db"), new KvOptions { BlockSize = 256 });
        for (int i = 0; i < 1000; i++)
        {
            db.Put(DbTestUtil.B($"k{i:D4}"), DbTestUtil.B($"v{i}"));
        }
        db.Flush();
        for (int i = 1000; i < 1100; i++)
        {
            db.Put(DbTestUtil.B($"k{i:D4}"), DbTestUtil.B($"v{i}"));
        }
        KvIterator it = db.NewIterator();
        db.Dispose();
        int n = 0;
        try
        {
            for (it.SeekToFirst(); it.Valid; it.Next())
            {
                Assert.Equal($"v{n}", DbTestUtil.S(it.Value));
                n++;
            }
            Assert.Equal(1100, n);
        }
        catch (ObjectDisposedException)
        {
            // The table files are closed.
        }
        it.Dispose();
    }

    [Fact]
    public void IteratorMidTableWhenItsDatabaseClosesThrowsObjectDisposed()
    {
        // The reader's index lives in native memory freed at close: the iterator must refuse to
        // walk it (ObjectDisposedException), never read freed memory.
        KvDb db = KvDb.Open(Path.Combine(_dir.FullName, "db2"), new KvOptions { BlockSize = 256 });
        for (int i = 0; i < 1000; i++)
        {
            db.Put(DbTestUtil.B($"k{i:D4}"), DbTestUtil.B($"v{i}"));
        }
        db.Flush();
        KvIterator it = db.NewIterator();
        it.SeekToFirst();
        for (int i = 0; i < 500; i++)
        {
            Assert.Equal($"v{i}", DbTestUtil.S(it.Value));
            it.Next();
        }
        db.Dispose();
        Assert.Throws<ObjectDisposedException>(() =>
        {
            while (it.Valid)
            {
                it.Next();
            }
        });
        it.Dispose();
    }

    [Fact]
    public void UnpositionedIteratorRefusesKeyValueAndMoves()
    {
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, new KvOptions { FileSystem = DbTestUtil.NewFs() });
        db.Put("k"u8, "v"u8);
        using KvIterator it = db.NewIterator();
        Assert.False(it.Valid);
        AssertNotPositioned(it);
        it.SeekToFirst();
        it.Next();
        Assert.False(it.Valid);
        AssertNotPositioned(it);
        it.Seek("z"u8);
        AssertNotPositioned(it);
        it.SeekForPrev("a"u8);
        AssertNotPositioned(it);
        // Repositioning works after the refusals.
        it.SeekToLast();
        Assert.Equal("k"u8.ToArray(), it.Key.ToArray());
    }

    [Fact]
    public void DisposedSnapshotIsRefusedByReads()
    {
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, new KvOptions { FileSystem = DbTestUtil.NewFs() });
        db.Put("k"u8, "v"u8);
        Snapshot s = db.GetSnapshot();
        s.Dispose();
        s.Dispose(); // idempotent
        var ro = new ReadOptions { Snapshot = s };
        Assert.Throws<ObjectDisposedException>(() => db.Get("k"u8, ro));
        Assert.Throws<ObjectDisposedException>(() => db.NewIterator(ro));
        Assert.Equal("0", db.GetProperty("rocksdb.num-snapshots"));
    }

    [Fact]
    public async Task SnapshotOfAnotherDatabaseIsAnArgumentError()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        using KvDb a = KvDb.Open(DbTestUtil.DbPath, new KvOptions { FileSystem = fs });
        using KvDb b = KvDb.Open(DbTestUtil.Parent + "/other", new KvOptions { FileSystem = fs });
        using Snapshot foreign = b.GetSnapshot();
        var ro = new ReadOptions { Snapshot = foreign };
        Assert.ThrowsAny<ArgumentException>(() => a.Get("k"u8, ro));
        Assert.ThrowsAny<ArgumentException>(() => a.TryGet("k"u8, new System.Buffers.ArrayBufferWriter<byte>(), ro));
        Assert.ThrowsAny<ArgumentException>(() => a.NewIterator(ro));
        await Assert.ThrowsAnyAsync<ArgumentException>(() => a.GetAsync("k"u8.ToArray(), ro).AsTask());
        await Assert.ThrowsAnyAsync<ArgumentException>(async () =>
        {
            await foreach (KeyValuePair<byte[], byte[]> _ in a.ScanAsync(default, default, ro))
            {
            }
        });
    }

    [Fact]
    public void SnapshotOutlivingItsDatabaseDisposesQuietly()
    {
        KvDb db = KvDb.Open(DbTestUtil.DbPath, new KvOptions { FileSystem = DbTestUtil.NewFs() });
        Snapshot s = db.GetSnapshot();
        db.Dispose();
        s.Dispose();
    }

    [Fact]
    public void SecondInstanceIsRefusedWhileTheFirstIsOpen()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        var o = new KvOptions { FileSystem = fs };
        KvDb first = KvDb.Open(DbTestUtil.DbPath, o);
        first.Put("k"u8, "v"u8);
        Assert.Throws<KvLockHeldException>(() => KvDb.Open(DbTestUtil.DbPath, o).Dispose());
        // The refused open disturbed nothing.
        Assert.Equal("v"u8.ToArray(), first.Get("k"u8));
        first.Put("k2"u8, "v2"u8);
        first.Dispose();
        using KvDb second = KvDb.Open(DbTestUtil.DbPath, o);
        Assert.Equal("v2"u8.ToArray(), second.Get("k2"u8));
    }

    [Fact]
    public void SecondInstanceIsRefusedOnDisk()
    {
        string path = Path.Combine(_dir.FullName, "db");
        using (KvDb first = KvDb.Open(path))
        {
            first.Put("k"u8, "v"u8);
            Assert.Throws<KvLockHeldException>(() => KvDb.Open(path).Dispose());
            Assert.Equal("v"u8.ToArray(), first.Get("k"u8));
        }
        using KvDb second = KvDb.Open(path);
        Assert.Equal("v"u8.ToArray(), second.Get("k"u8));
    }

    [Fact]
    public void MissingDatabaseWithoutCreateIfMissingIsRefused()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        Assert.Throws<KvException>(() => KvDb.Open(DbTestUtil.DbPath, new KvOptions { FileSystem = fs, CreateIfMissing = false }).Dispose());
        Assert.False(fs.DirectoryExists(DbTestUtil.DbPath));
        string onDisk = Path.Combine(_dir.FullName, "missing");
        Assert.Throws<KvException>(() => KvDb.Open(onDisk, new KvOptions { CreateIfMissing = false }).Dispose());
        Assert.False(Directory.Exists(onDisk));
    }

    [Fact]
    public void ExistingDatabaseWithErrorIfExistsIsRefused()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        using (KvDb db = KvDb.Open(DbTestUtil.DbPath, new KvOptions { FileSystem = fs }))
        {
            db.Put("k"u8, "v"u8);
        }
        Assert.Throws<KvException>(() => KvDb.Open(DbTestUtil.DbPath, new KvOptions { FileSystem = fs, ErrorIfExists = true }).Dispose());
        using KvDb again = KvDb.Open(DbTestUtil.DbPath, new KvOptions { FileSystem = fs });
        Assert.Equal("v"u8.ToArray(), again.Get("k"u8));
    }

    private static void AssertNotPositioned(KvIterator it)
    {
        Assert.False(it.Valid);
        Assert.Throws<InvalidOperationException>(() => it.Key.Length);
        Assert.Throws<InvalidOperationException>(() => it.Value.Length);
        Assert.Throws<InvalidOperationException>(() => it.Next());
        Assert.Throws<InvalidOperationException>(() => it.Prev());
    }
}
