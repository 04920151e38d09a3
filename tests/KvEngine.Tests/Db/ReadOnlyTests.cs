using KvEngine.Storage;
using static KvEngine.Tests.Db.DbTestUtil;

namespace KvEngine.Tests.Db;

/// <summary>
/// KvDb.OpenReadOnly (RocksDB's OpenForReadOnly): no LOCK, so it opens beside a writer (on a
/// checkpoint, and on the writer's own directory while it is quiescent); it sees the WAL's data,
/// reads, iterates, snapshots and reports properties; every write, flush, compaction and family
/// change throws NotSupportedException; and it writes nothing (the directory is byte-for-byte
/// unchanged after open, reads and close).
/// </summary>
public sealed class ReadOnlyTests
{
    private const string Checkpoint = Parent + "/ckpt";

    /// <summary>Every file of <paramref name="dir"/> with its bytes.</summary>
    private static Dictionary<string, string> Listing(FaultInjectionFileSystem fs, string dir) =>
        fs.GetChildren(dir).ToDictionary(n => n, n => Convert.ToHexString(fs.ReadAllBytes(Path.Combine(dir, n))));

    [Fact]
    public void ReadOnlyGetLiveFilesReportsTheManifestLengthItRecoveredNotTheWritersLength()
    {
        // The tables it lists are those of the state it opened with; a MANIFEST copy cut at the
        // writer's later length would describe other tables.
        FaultInjectionFileSystem fs = NewFs();
        using KvDb writer = KvDb.Open(DbPath, SmallOptions(fs));
        writer.Put(B("a"), B("1"));
        writer.Flush();
        string manifest;
        ulong sizeAtOpen;
        using (KvDb ro = KvDb.OpenReadOnly(DbPath, SmallOptions(fs)))
        {
            IReadOnlyList<string> files = ro.GetLiveFiles(out sizeAtOpen, flushMemtable: false);
            manifest = Assert.Single(files, f => f.StartsWith("/MANIFEST-", StringComparison.Ordinal));
            Assert.Equal((ulong)fs.GetFileSize(DbPath + manifest), sizeAtOpen);
            writer.Put(B("b"), B("2"));
            writer.Flush(); // the writer's MANIFEST grows past what the reader recovered
            Assert.True((ulong)fs.GetFileSize(DbPath + manifest) > sizeAtOpen);
            ro.GetLiveFiles(out ulong sizeLater, flushMemtable: false);
            Assert.Equal(sizeAtOpen, sizeLater);
        }
    }

    [Fact]
    public void OpensBesideAWriterOnItsQuiescentDirectoryAndSeesTheWal()
    {
        FaultInjectionFileSystem fs = NewFs();
        KvOptions options = SmallOptions(fs);
        options.CreateMissingColumnFamilies = true;
        using KvDb writer = KvDb.Open(DbPath, options, [new ColumnFamilyDescriptor("default", options), new ColumnFamilyDescriptor("cf")]);
        ColumnFamilyHandle wcf = writer.GetColumnFamily("cf")!;
        for (int i = 0; i < 500; i++)
        {
            writer.Put(B($"k{i:D4}"), B($"v{i}"));
        }
        writer.Flush();
        writer.Put(B("k0001"), B("in-wal"));
        writer.Delete(B("k0002"));
        writer.DeleteRange(B("k0100"), B("k0200"));
        writer.Put(wcf, B("c"), B("cf-in-wal"));
        SortedDictionary<string, string> expected = ReadAll(writer);
        Dictionary<string, string> before = Listing(fs, DbPath);

        using (KvDb ro = KvDb.OpenReadOnly(DbPath, SmallOptions(fs), [new ColumnFamilyDescriptor("default", SmallOptions(fs)), new ColumnFamilyDescriptor("cf")]))
        {
            Assert.True(ro.IsReadOnly);
            Assert.Equal(expected, ReadAll(ro));
            Assert.Equal("in-wal", S(ro.Get(B("k0001"))));
            Assert.Null(ro.Get(B("k0002")));
            Assert.Equal("cf-in-wal", S(ro.Get(ro.GetColumnFamily("cf")!, B("c"))));
            using (Snapshot snap = ro.GetSnapshot())
            {
                Assert.Equal(expected, ReadAll(ro, new ReadOptions { Snapshot = snap }));
            }
            Assert.Equal(writer.LatestSequenceNumber, ro.LatestSequenceNumber);
            Assert.Equal(writer.GetProperty("rocksdb.num-files-at-level0"), ro.GetProperty("rocksdb.num-files-at-level0"));
            Assert.NotEqual("0", ro.GetProperty("rocksdb.num-entries-active-mem-table"));
            // The writer goes on; the read-only instance keeps the state it opened with.
            writer.Put(B("later"), B("x"));
            Assert.Null(ro.Get(B("later")));
        }
        Dictionary<string, string> after = Listing(fs, DbPath);
        Assert.Equal(before.Keys.Order(), after.Keys.Order());
        foreach ((string name, string bytes) in before)
        {
            if (!name.EndsWith(".log", StringComparison.Ordinal))
            {
                Assert.Equal(bytes, after[name]); // nothing but the writer's WAL append changed
            }
        }
    }

    [Fact]
    public void WritesNothingAndEveryWriteThrowsNotSupported()
    {
        FaultInjectionFileSystem fs = NewFs();
        using (KvDb db = KvDb.Open(DbPath, SmallOptions(fs)))
        {
            for (int i = 0; i < 300; i++)
            {
                db.Put(B($"k{i:D4}"), B(new string('v', 100))); // memtables switch: several WALs
            }
        }
        Dictionary<string, string> before = Listing(fs, DbPath);
        var writes = new List<Action<KvDb>>
        {
            db => db.Put(B("k"), B("v")),
            db => db.Delete(B("k")),
            db => db.DeleteRange(B("a"), B("b")),
            db => db.DeleteRange(B("a"), B("a")), // an empty range writes nothing, but is still a write
            db => db.DeleteRangeAsync(B("a"), B("a")).AsTask().GetAwaiter().GetResult(),
            db => db.Write(new WriteBatch()),
            db => db.PutAsync(B("k"), B("v")).AsTask().GetAwaiter().GetResult(),
            db => db.Flush(),
            db => db.FlushAsync().AsTask().GetAwaiter().GetResult(),
            db => db.CompactRange(null, null),
            db => db.CompactRangeAsync(null, null).AsTask().GetAwaiter().GetResult(),
            db => db.CreateColumnFamily("x"),
            db => db.DropColumnFamily(db.DefaultColumnFamily),
            db => db.Resume(),
            db => db.DisableFileDeletions(),
            db => db.EnableFileDeletions(),
            db => db.GetLiveFiles(out _),
            db => db.CreateCheckpoint(Checkpoint),
        };
        using (KvDb ro = KvDb.OpenReadOnly(DbPath, SmallOptions(fs)))
        {
            foreach (Action<KvDb> write in writes)
            {
                KvReadOnlyException e = Assert.Throws<KvReadOnlyException>(() => write(ro));
                Assert.Equal(KvStatusCode.NotSupported, e.StatusCode);
                Assert.Contains("read-only", e.Message, StringComparison.Ordinal);
            }
            Assert.Equal(300, ReadAll(ro).Count);
            Assert.Contains("/CURRENT", ro.GetLiveFiles(out _, flushMemtable: false));
            Assert.NotEmpty(ro.GetSortedWalFiles());
        }
        Assert.Equal(before, Listing(fs, DbPath));
        Assert.False(fs.DirectoryExists(Checkpoint));
    }

    [Fact]
    public void OpensACheckpointBesideTheWriterAndASubsetOfFamilies()
    {
        FaultInjectionFileSystem fs = NewFs();
        KvOptions options = SmallOptions(fs);
        options.CreateMissingColumnFamilies = true;
        using KvDb writer = KvDb.Open(DbPath, options, [new ColumnFamilyDescriptor("default", options), new ColumnFamilyDescriptor("a"), new ColumnFamilyDescriptor("b")]);
        writer.Put(writer.GetColumnFamily("a")!, B("ka"), B("va"));
        writer.Put(writer.GetColumnFamily("b")!, B("kb"), B("vb"));
        writer.CreateCheckpoint(Checkpoint, ulong.MaxValue);
        using KvDb ro1 = KvDb.OpenReadOnly(Checkpoint, SmallOptions(fs), [new ColumnFamilyDescriptor("default", SmallOptions(fs)), new ColumnFamilyDescriptor("b")]);
        using KvDb ro2 = KvDb.OpenReadOnly(Checkpoint, SmallOptions(fs)); // two readers at once: no LOCK
        Assert.Equal(["default", "b"], ro1.ColumnFamilies.Select(h => h.Name));
        Assert.Equal("vb", S(ro1.Get(ro1.GetColumnFamily("b")!, B("kb"))));
        Assert.Null(ro1.GetColumnFamily("a"));
        Assert.Empty(ReadAll(ro2));
        Assert.Throws<ArgumentException>(() => KvDb.OpenReadOnly(Checkpoint, SmallOptions(fs), [new ColumnFamilyDescriptor("default", SmallOptions(fs)), new ColumnFamilyDescriptor("missing")]));
        // While readers are open, a writer still opens the checkpoint.
        using KvDb w2 = KvDb.Open(Checkpoint, options, [new ColumnFamilyDescriptor("default", options), new ColumnFamilyDescriptor("a"), new ColumnFamilyDescriptor("b")]);
        Assert.Equal("va", S(w2.Get(w2.GetColumnFamily("a")!, B("ka"))));
    }

    [Fact]
    public void RefusesAMissingDatabaseAndAWalWhenAsked()
    {
        FaultInjectionFileSystem fs = NewFs();
        Assert.Throws<KvException>(() => KvDb.OpenReadOnly(DbPath, SmallOptions(fs)));
        Assert.False(fs.DirectoryExists(DbPath));
        using (KvDb db = KvDb.Open(DbPath, SmallOptions(fs)))
        {
            db.Put(B("k"), B("v"));
        }
        KvException e = Assert.Throws<KvException>(() => KvDb.OpenReadOnly(DbPath, SmallOptions(fs), errorIfWalFileExists: true));
        Assert.Contains("WAL", e.Message, StringComparison.Ordinal);
        using KvDb ro = KvDb.OpenReadOnly(DbPath, SmallOptions(fs));
        Assert.Equal("v", S(ro.Get(B("k"))));
    }

    [Fact]
    public void ADamagedWalTailIsToleratedAsByAWriterAndMergesReplay()
    {
        FaultInjectionFileSystem fs = NewFs();
        KvOptions options = SmallOptions(fs);
        options.MergeOperator = new StringAppendOperator();
        using (KvDb db = KvDb.Open(DbPath, options))
        {
            db.Merge(B("m"), B("a"));
            db.Merge(B("m"), B("b"));
            db.Put(B("torn"), B(new string('t', 200)));
        }
        string wal = ListFiles(fs, DbPath).Logs.Last();
        byte[] bytes = fs.ReadAllBytes(Path.Combine(DbPath, wal));
        fs.WriteAllBytes(Path.Combine(DbPath, wal), bytes.AsSpan(0, bytes.Length - 50));
        using KvDb ro = KvDb.OpenReadOnly(DbPath, options);
        Assert.Equal("a,b", S(ro.Get(B("m"))));
        Assert.Null(ro.Get(B("torn")));
    }
}
