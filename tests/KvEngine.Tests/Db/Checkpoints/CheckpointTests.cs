using KvEngine.Storage;
using static KvEngine.Tests.Db.DbTestUtil;

namespace KvEngine.Tests.Db.Checkpoints;

/// <summary>
/// KvDb.CreateCheckpoint (RocksDB 7.8's Checkpoint): a checkpoint of several families with
/// unflushed data, merges and range deletions opens with the same contents, flushed or from its
/// copied WALs; it survives a power loss once CreateCheckpoint returned; a failed hard link falls
/// back to copying; an existing directory is refused; a failure at any file operation leaves no
/// checkpoint (nor staging directory) and the source intact.
/// </summary>
public sealed class CheckpointTests
{
    private const string Checkpoint = Parent + "/ckpt";

    private static ColumnFamilyOptions FamilyOptions() => new() { MergeOperator = new StringAppendOperator(), WriteBufferSize = 16 << 10 };

    private static KvOptions Options(FaultInjectionFileSystem fs)
    {
        KvOptions o = SmallOptions(fs);
        o.MergeOperator = new StringAppendOperator();
        o.CreateMissingColumnFamilies = true;
        return o;
    }

    private static KvDb OpenWithFamilies(FaultInjectionFileSystem fs, string path) =>
        KvDb.Open(path, Options(fs), [new ColumnFamilyDescriptor("default", Options(fs)), new ColumnFamilyDescriptor("one", FamilyOptions()), new ColumnFamilyDescriptor("two", FamilyOptions())]);

    /// <summary>Flushed tables, compacted tables, merges, a range deletion and unflushed data in every family.</summary>
    private static void Fill(KvDb db, int round = 0)
    {
        ColumnFamilyHandle one = db.GetColumnFamily("one")!;
        ColumnFamilyHandle two = db.GetColumnFamily("two")!;
        for (int i = 0; i < 300; i++)
        {
            db.Put(B($"k{i:D4}"), B($"d{round}-{i}-{new string('x', 40)}"));
            db.Put(one, B($"k{i:D4}"), B($"o{round}-{i}"));
        }
        db.Flush();
        db.CompactRange(one, null, null);
        for (int i = 0; i < 50; i++)
        {
            db.Merge(two, B($"m{i % 7}"), B($"{round}.{i}"));
            db.Merge(B($"m{i % 5}"), B($"{round}.{i}"));
        }
        db.DeleteRange(B("k0100"), B("k0150"));
        db.DeleteRange(one, B("k0200"), B("k0250"));
        db.Delete(B("k0007"));
        db.Put(two, B("unflushed"), B($"r{round}"));
    }

    [Theory]
    [InlineData(0UL)]             // flush first (RocksDB's default)
    [InlineData(ulong.MaxValue)]  // never flush: the WALs carry the unflushed writes
    [InlineData(1UL << 30)]       // flush only past 1 GiB of WAL: not here
    public void ACheckpointOfSeveralFamiliesOpensWithTheSameContents(ulong logSizeForFlush)
    {
        FaultInjectionFileSystem fs = NewFs();
        SortedDictionary<string, SortedDictionary<string, string>> expected;
        using (KvDb db = OpenWithFamilies(fs, DbPath))
        {
            Fill(db);
            expected = CheckpointContents.Read(db);
            db.CreateCheckpoint(Checkpoint, logSizeForFlush);
            Fill(db, round: 1); // later writes do not reach the checkpoint
            Assert.False(fs.DirectoryExists(Checkpoint + ".tmp"));
        }
        (List<string> _, List<string> logs, List<string> manifests, List<string> other) = ListFiles(fs, Checkpoint);
        Assert.Single(manifests);
        Assert.Empty(other);
        Assert.NotEmpty(logs);
        Assert.Contains(fs.GetChildren(Checkpoint), n => n.StartsWith("OPTIONS-", StringComparison.Ordinal));
        using KvDb copy = OpenWithFamilies(fs, Checkpoint);
        CheckpointContents.AssertEqual(expected, CheckpointContents.Read(copy));
        // A checkpoint is an ordinary database: it takes writes without touching the source.
        copy.Put(B("after"), B("x"));
        using KvDb source = OpenWithFamilies(fs, DbPath);
        Assert.Null(source.Get(B("after")));
    }

    [Fact]
    public void WithoutAFlushTheUnflushedDataComesFromTheCopiedWal()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = OpenWithFamilies(fs, DbPath);
        db.Put(B("only-in-wal"), B("v"));
        int tablesBefore = TotalTableFiles(db);
        db.CreateCheckpoint(Checkpoint, ulong.MaxValue);
        Assert.Equal(tablesBefore, TotalTableFiles(db)); // no flush happened
        Assert.Empty(ListFiles(fs, Checkpoint).Tables);
        using KvDb copy = KvDb.OpenReadOnly(Checkpoint, Options(fs), [new ColumnFamilyDescriptor("default", Options(fs)), new ColumnFamilyDescriptor("one", FamilyOptions())]);
        Assert.Equal("v", S(copy.Get(B("only-in-wal"))));
    }

    [Fact]
    public void TheDefaultCheckpointFlushesEveryFamily()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = OpenWithFamilies(fs, DbPath);
        db.Put(B("a"), B("1"));
        db.Put(db.GetColumnFamily("one")!, B("b"), B("2"));
        db.CreateCheckpoint(Checkpoint);
        Assert.Equal(1, TotalTableFiles(db));
        Assert.Equal(1, TotalTableFiles(db, db.GetColumnFamily("one")!));
        Assert.Equal(2, ListFiles(fs, Checkpoint).Tables.Count);
    }

    [Fact]
    public void WithAtomicFlushTheCheckpointsFlushIsOneAtomicGroup()
    {
        FaultInjectionFileSystem fs = NewFs();
        KvOptions options = Options(fs);
        options.AtomicFlush = true;
        using KvDb db = KvDb.Open(DbPath, options, [new ColumnFamilyDescriptor("default", options), new ColumnFamilyDescriptor("one", FamilyOptions()), new ColumnFamilyDescriptor("two", FamilyOptions())]);
        using (var batch = new WriteBatch())
        {
            batch.Put(B("a"), B("0"));
            batch.Put(db.GetColumnFamily("one")!, B("b"), B("1"));
            batch.Merge(db.GetColumnFamily("two")!, B("c"), B("2"));
            db.Write(batch);
        }
        db.CreateCheckpoint(Checkpoint);
        foreach (ColumnFamilyHandle h in db.ColumnFamilies)
        {
            Assert.Equal("1", db.GetProperty(h, "rocksdb.num-files-at-level0"));
        }
        KvOptions copyOptions = Options(fs);
        copyOptions.AtomicFlush = true;
        using KvDb copy = KvDb.Open(Checkpoint, copyOptions, [new ColumnFamilyDescriptor("default", copyOptions), new ColumnFamilyDescriptor("one", FamilyOptions()), new ColumnFamilyDescriptor("two", FamilyOptions())]);
        CheckpointContents.AssertEqual(CheckpointContents.Read(db), CheckpointContents.Read(copy));
        Assert.Equal(3, ListFiles(fs, Checkpoint).Tables.Count);
    }

    [Fact]
    public void ACheckpointSurvivesAPowerLossOnceCreated()
    {
        FaultInjectionFileSystem fs = NewFs();
        SortedDictionary<string, SortedDictionary<string, string>> expected;
        KvDb db = OpenWithFamilies(fs, DbPath);
        Fill(db);
        expected = CheckpointContents.Read(db);
        db.CreateCheckpoint(Checkpoint, ulong.MaxValue); // WAL copies must be synced too
        Abandon(fs, db, powerLoss: true);
        using KvDb copy = OpenWithFamilies(fs, Checkpoint);
        CheckpointContents.AssertEqual(expected, CheckpointContents.Read(copy));
    }

    [Fact]
    public void AFailedHardLinkFallsBackToCopyingThatFileAndEveryLaterOne()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = OpenWithFamilies(fs, DbPath);
        Fill(db);
        SortedDictionary<string, SortedDictionary<string, string>> expected = CheckpointContents.Read(db);
        int links = 0;
        fs.ShouldFail = (op, _) => op == FileOperation.Link && ++links > 0;
        db.CreateCheckpoint(Checkpoint);
        fs.ShouldFail = null;
        Assert.Equal(1, links); // tried once, then copied
        // Copies, not links: corrupting the source's tables leaves the checkpoint intact.
        foreach (string table in ListFiles(fs, DbPath).Tables)
        {
            fs.WriteAllBytes(Path.Combine(DbPath, table), new byte[10]);
        }
        using KvDb copy = OpenWithFamilies(fs, Checkpoint);
        CheckpointContents.AssertEqual(expected, CheckpointContents.Read(copy));
    }

    [Fact]
    public void TablesAreHardLinkedWhenPossible()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = OpenWithFamilies(fs, DbPath);
        Fill(db);
        int links = 0;
        fs.ShouldFail = (op, _) => op == FileOperation.Link && ++links < 0;
        db.CreateCheckpoint(Checkpoint);
        fs.ShouldFail = null;
        int tables = ListFiles(fs, Checkpoint).Tables.Count;
        Assert.True(tables > 0);
        Assert.True(links >= tables + 1, $"{links} links for {tables} tables and the OPTIONS file");
    }

    [Fact]
    public void AnExistingDirectoryIsRefusedAndALeftoverStagingDirectoryIsReplaced()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = OpenWithFamilies(fs, DbPath);
        db.Put(B("k"), B("v"));
        fs.CreateDirectory(Checkpoint);
        var e = Assert.Throws<ArgumentException>(() => db.CreateCheckpoint(Checkpoint));
        Assert.Contains("exists", e.Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentException>(() => db.CreateCheckpoint(Checkpoint + "/")); // trailing separator: the same directory

        string other = Parent + "/other";
        fs.CreateDirectory(other + ".tmp");
        fs.WriteAllBytes(other + ".tmp/000001.sst", new byte[3]);
        db.CreateCheckpoint(other);
        Assert.False(fs.DirectoryExists(other + ".tmp"));
        using KvDb copy = OpenWithFamilies(fs, other);
        Assert.Equal("v", S(copy.Get(B("k"))));
        Assert.ThrowsAny<ArgumentException>(() => db.CreateCheckpoint(""));
    }

    /// <summary>
    /// Fails the Nth file operation of a checkpoint, for every N until one succeeds: each failure
    /// is a KvException, leaves neither the checkpoint nor its staging directory, keeps file
    /// deletions enabled, and the source keeps its contents and takes writes; then a power loss
    /// leaves the source and any completed checkpoint intact.
    /// </summary>
    [Fact]
    public void AFailureAtAnyStepLeavesNoCheckpointAndTheSourceIntact()
    {
        FaultInjectionFileSystem fs = NewFs();
        KvDb db = OpenWithFamilies(fs, DbPath);
        Fill(db);
        int failures = 0;
        int fallbacks = 0;
        for (int n = 1; ; n++)
        {
            db.Put(B("unflushed-" + n), B("v")); // something to flush each time
            SortedDictionary<string, SortedDictionary<string, string>> expected = CheckpointContents.Read(db);
            int ops = 0;
            FileOperation? failed = null;
            // Only the checkpoint's own files: a failure in the source's flush is another test's subject.
            fs.ShouldFail = (op, path) =>
            {
                bool fail = path.StartsWith(Checkpoint, StringComparison.Ordinal) && ++ops == n;
                failed = fail ? op : failed;
                return fail;
            };
            try
            {
                db.CreateCheckpoint(Checkpoint);
                fs.ShouldFail = null;
                if (failed == FileOperation.Link)
                {
                    // A failed link is no failure: the file was copied instead.
                    using (KvDb linked = OpenWithFamilies(fs, Checkpoint))
                    {
                        CheckpointContents.AssertEqual(expected, CheckpointContents.Read(linked));
                    }
                    RemoveDirectory(fs, Checkpoint);
                    fallbacks++;
                    continue;
                }
                Assert.Null(failed);
                break;
            }
            catch (KvException)
            {
                fs.ShouldFail = null;
                failures++;
            }
            Assert.False(fs.DirectoryExists(Checkpoint), $"step {n}: a partial checkpoint was left");
            Assert.False(fs.DirectoryExists(Checkpoint + ".tmp"), $"step {n}: the staging directory was left");
            Assert.False(db.Impl.FileDeletionsDisabled, $"step {n}: file deletions stay disabled");
            CheckpointContents.AssertEqual(expected, CheckpointContents.Read(db));
        }
        // Every step before the one that succeeded was failed, and the successful checkpoint took at
        // least one file operation per file it holds. (How many files there are depends on when
        // background flushes and compactions ran, so the bound is the checkpoint's own.)
        int files = fs.GetChildren(Checkpoint).Count;
        Assert.True(failures > 0 && failures + fallbacks >= files, $"{failures} steps failed and {fallbacks} links fell back for a checkpoint of {files} files");
        SortedDictionary<string, SortedDictionary<string, string>> final = CheckpointContents.Read(db);
        Abandon(fs, db, powerLoss: true);
        using (KvDb source = OpenWithFamilies(fs, DbPath))
        {
            CheckpointContents.AssertEqual(final, CheckpointContents.Read(source));
        }
        using KvDb copy = OpenWithFamilies(fs, Checkpoint);
        CheckpointContents.AssertEqual(final, CheckpointContents.Read(copy));
    }

    private static void RemoveDirectory(FaultInjectionFileSystem fs, string dir)
    {
        foreach (string name in fs.GetChildren(dir))
        {
            fs.DeleteFile(Path.Combine(dir, name));
        }
        fs.DeleteDirectory(dir);
    }

    [Fact]
    public void AReadOnlyDatabaseCannotCheckpoint()
    {
        FaultInjectionFileSystem fs = NewFs();
        using (KvDb db = KvDb.Open(DbPath, SmallOptions(fs)))
        {
            db.Put(B("k"), B("v"));
        }
        using KvDb ro = KvDb.OpenReadOnly(DbPath, SmallOptions(fs));
        Assert.Throws<KvReadOnlyException>(() => ro.CreateCheckpoint(Checkpoint));
        Assert.False(fs.DirectoryExists(Checkpoint));
    }
}
