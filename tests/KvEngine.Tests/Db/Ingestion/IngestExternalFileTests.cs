using KvEngine.Storage;
using KvEngine.Table;
using KvEngine.Util;
using KvEngine.Versions;
using static KvEngine.Tests.Db.DbTestUtil;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Tests.Db.Ingestion;

/// <summary>
/// IngestExternalFile as RocksDB 7.8 does it: the level each file lands in (bottommost when
/// nothing overlaps, above the first level whose data overlaps, level 0 for files overlapping each
/// other), the sequence number (0, or LastSequence + 1 written back into the file), the memtable
/// flush, move with link and its copy fallback, the refusals (leaving the database unchanged),
/// and durability across power loss.
/// </summary>
public class IngestExternalFileTests
{
    private const string External = "/kvtest/ext";

    private static KvOptions Options(FaultInjectionFileSystem fs) => new() { FileSystem = fs, DisableAutoCompactions = true };

    /// <summary>An SstFileWriter file on <paramref name="fs"/>: keys put with value "name:key", and the given deletions and range deletions.</summary>
    internal static string WriteFile(IFileSystem fs, string name, IEnumerable<string> puts, IEnumerable<string>? deletes = null,
        IEnumerable<(string Begin, string End)>? ranges = null, uint columnFamilyId = SstFileWriter.UnknownColumnFamilyId)
    {
        if (!fs.DirectoryExists(External))
        {
            fs.CreateDirectory(External);
        }
        string path = External + "/" + name + ".sst";
        var entries = new SortedDictionary<string, bool>(StringComparer.Ordinal);
        foreach (string k in puts)
        {
            entries[k] = true;
        }
        foreach (string k in deletes ?? [])
        {
            entries[k] = false;
        }
        using var writer = new SstFileWriter(new ColumnFamilyOptions(), fs, columnFamilyId, "");
        writer.Open(path);
        foreach ((string key, bool put) in entries)
        {
            if (put)
            {
                writer.Put(B(key), B(name + ":" + key));
            }
            else
            {
                writer.Delete(B(key));
            }
        }
        foreach ((string begin, string end) in ranges ?? [])
        {
            writer.DeleteRange(B(begin), B(end));
        }
        writer.Finish();
        return path;
    }

    /// <summary>A database on <paramref name="fs"/> holding <paramref name="key"/> = <paramref name="value"/> in a level-0 table.</summary>
    private static KvDb OpenWithTable(FaultInjectionFileSystem fs, string key, string value)
    {
        KvDb db = KvDb.Open(DbPath, Options(fs));
        db.Put(B(key), B(value));
        db.Flush();
        return db;
    }

    private static Version Current(KvDb db) => db.Impl.DefaultFamily.Versions.Current;

    private static FileMetaData OnlyFileAt(KvDb db, int level, ulong number)
    {
        foreach (FileMetaData f in Current(db).Files(level))
        {
            if (f.Number == number)
            {
                return f;
            }
        }
        throw new Xunit.Sdk.XunitException($"table {number} is not in level {level}");
    }

    /// <summary>The newest table number in the version (the ingested one, right after an ingestion).</summary>
    private static (int Level, FileMetaData File) Newest(KvDb db)
    {
        (int, FileMetaData)? best = null;
        for (int l = 0; l < Version.NumLevels; l++)
        {
            foreach (FileMetaData f in Current(db).Files(l))
            {
                if (best == null || f.Number > best.Value.Item2.Number)
                {
                    best = (l, f);
                }
            }
        }
        return best ?? throw new Xunit.Sdk.XunitException("no tables");
    }

    /// <summary>The global seqno the ingested table's properties record (read from the file, not the MANIFEST).</summary>
    private static ulong RecordedGlobalSeqno(IFileSystem fs, ulong number)
    {
        string path = FileNames.TableFile(DbPath, number);
        using TableReader reader = TableReader.Open(fs.OpenRandomAccess(path), fs.GetFileSize(path), new TableOptions(), path);
        return Coding.DecodeFixed64(reader.Properties.UserCollected[TablePropertyNames.ExternalSstFileGlobalSeqno]);
    }

    [Fact]
    public void EmptyDatabaseGetsTheFileInTheBottommostLevelWithSequenceZero()
    {
        FaultInjectionFileSystem fs = NewFs();
        string file = WriteFile(fs, "a", ["k1", "k2", "k3"]);
        using KvDb db = KvDb.Open(DbPath, Options(fs));
        ulong before = db.LatestSequenceNumber;
        db.IngestExternalFile([file]);
        (int level, FileMetaData meta) = Newest(db);
        Assert.Equal(Version.NumLevels - 1, level);
        Assert.Equal(0UL, meta.LargestSeqno);
        Assert.Equal(before, db.LatestSequenceNumber);
        Assert.Equal(0UL, RecordedGlobalSeqno(fs, meta.Number));
        Assert.Equal("a:k2", S(db.Get(B("k2"))!));
        Assert.True(fs.FileExists(file), "a copy leaves the caller's file");
    }

    [Fact]
    public void FileOverlappingLevelOneDataGoesAboveItWithANewSequenceWrittenBack()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, Options(fs));
        db.Put(B("k2"), B("old"));
        db.Put(B("z"), B("z"));
        db.Flush();
        db.CompactRange(null, null); // the data moves to the bottommost level
        int dataLevel = Newest(db).Level;
        Assert.True(dataLevel > 0);
        ulong last = db.LatestSequenceNumber;

        db.IngestExternalFile([WriteFile(fs, "b", ["k1", "k2"])]);
        (int level, FileMetaData meta) = Newest(db);
        Assert.Equal(dataLevel - 1, level); // the deepest level above the overlapping data
        Assert.Equal(last + 1, meta.LargestSeqno);
        Assert.Equal(last + 1, db.LatestSequenceNumber);
        Assert.Equal(last + 1, RecordedGlobalSeqno(fs, meta.Number));
        Assert.Equal("b:k2", S(db.Get(B("k2"))!));

        // A later write gets the next sequence number and wins.
        db.Put(B("k2"), B("new"));
        Assert.Equal(last + 2, db.LatestSequenceNumber);
        Assert.Equal("new", S(db.Get(B("k2"))!));
    }

    [Fact]
    public void FileInsideTheGapOfALevelsFilesStillGoesAboveThatLevel()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, Options(fs));
        db.Put(B("a"), B("a"));
        db.Put(B("z"), B("z"));
        db.Flush();
        db.CompactRange(null, null);
        int dataLevel = Newest(db).Level;
        // [m, n] overlaps the file range [a, z] but no data: it does not fit there, yet needs no new sequence.
        db.IngestExternalFile([WriteFile(fs, "gap", ["m", "n"])]);
        (int level, FileMetaData meta) = Newest(db);
        Assert.Equal(1, dataLevel);
        Assert.Equal(Version.NumLevels - 1, level); // below level 1, whose file range it falls in but whose data it misses
        Assert.Equal(0UL, meta.LargestSeqno);
    }

    [Fact]
    public void FileOverlappingTheMemtableFlushesItFirst()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, Options(fs));
        db.Put(B("k1"), B("mem"));
        ulong last = db.LatestSequenceNumber;
        Assert.Equal(0, TotalTableFiles(db));
        db.IngestExternalFile([WriteFile(fs, "c", ["k1", "k5"])]);
        Assert.Equal("0", db.GetProperty("rocksdb.num-entries-active-mem-table"));
        // Level 0: the flushed memtable (k1 at its sequence) and, above it, the file with the next one.
        Assert.Equal(2, TotalTableFiles(db));
        Assert.Equal([last + 1, last], Current(db).Files(0).Select(f => f.LargestSeqno).ToArray());
        Assert.Equal(last + 1, db.LatestSequenceNumber);
        Assert.Equal("c:k1", S(db.Get(B("k1"))!));
    }

    [Fact]
    public void RangeTombstoneInTheMemtableCountsAsOverlap()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, Options(fs));
        db.DeleteRange(B("a"), B("z"));
        db.IngestExternalFile([WriteFile(fs, "r", ["m"])]);
        Assert.Equal("r:m", S(db.Get(B("m"))!)); // newer than the tombstone
        Assert.Equal(2, TotalTableFiles(db));
    }

    [Fact]
    public void RefusedFlushLeavesTheDatabaseUnchanged()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, Options(fs));
        db.Put(B("k1"), B("mem"));
        string file = WriteFile(fs, "d", ["k1"]);
        Assert.Throws<InvalidOperationException>(() => db.IngestExternalFile([file], new IngestExternalFileOptions { AllowBlockingFlush = false }));
        Assert.Equal("mem", S(db.Get(B("k1"))!));
        Assert.Equal(0, TotalTableFiles(db));
        Assert.Empty(ListFiles(fs, DbPath).Tables);
        // Without overlap no flush is needed.
        db.IngestExternalFile([WriteFile(fs, "e", ["x"])], new IngestExternalFileOptions { AllowBlockingFlush = false });
        Assert.Equal("e:x", S(db.Get(B("x"))!));
    }

    [Fact]
    public void SnapshotForcesANewSequenceAndDoesNotSeeTheFile()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, Options(fs));
        db.Put(B("a"), B("1"));
        using Snapshot snap = db.GetSnapshot();
        ulong last = db.LatestSequenceNumber;
        db.IngestExternalFile([WriteFile(fs, "f", ["q"])]);
        (int level, FileMetaData meta) = Newest(db);
        Assert.Equal(Version.NumLevels - 1, level);
        Assert.Equal(last + 1, meta.LargestSeqno);
        Assert.Null(db.Get(B("q"), new ReadOptions { Snapshot = snap }));
        Assert.Equal("f:q", S(db.Get(B("q"))!));
    }

    [Fact]
    public void FilesOverlappingEachOtherAllGoToLevelZeroWithIncreasingSequences()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, Options(fs));
        ulong last = db.LatestSequenceNumber;
        string f1 = WriteFile(fs, "g1", ["a", "m"]);
        string f2 = WriteFile(fs, "g2", ["k", "z"]);
        db.IngestExternalFile([f2, f1]);
        IReadOnlyList<FileMetaData> l0 = Current(db).Files(0);
        Assert.Equal(2, l0.Count);
        Assert.Equal(last + 2, db.LatestSequenceNumber);
        // Sorted by smallest key: g1 (a..m) gets last+1, g2 (k..z) last+2 and wins where they meet.
        Assert.Equal("g2:k", S(db.Get(B("k"))!));
        Assert.Equal("g1:m", S(db.Get(B("m"))!));
        Assert.Equal(new HashSet<ulong> { last + 1, last + 2 }, l0.Select(f => f.LargestSeqno).ToHashSet());
    }

    [Fact]
    public void FilesSharingABoundaryUserKeyOverlap()
    {
        // RocksDB's sstableKeyCompare: one user key at both ends is an overlap (unless one end is a tombstone's exclusive end).
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, Options(fs));
        string f1 = WriteFile(fs, "s1", ["a", "m"]);
        string f2 = WriteFile(fs, "s2", ["n"], deletes: ["m"]);
        db.IngestExternalFile([f1, f2]);
        Assert.Equal(2, Current(db).NumFiles(0));
        Assert.Null(db.Get(B("m")));

        // A range deletion ending at the next file's first key does not overlap it.
        string f3 = WriteFile(fs, "s3", ["p"], ranges: [("p", "r")]);
        string f4 = WriteFile(fs, "s4", ["r", "t"]);
        db.IngestExternalFile([f3, f4]);
        Assert.Equal(2, Current(db).NumFiles(Version.NumLevels - 1));
        Assert.Equal("s3:p", S(db.Get(B("p"))!));
        Assert.Equal("s4:r", S(db.Get(B("r"))!));
    }

    [Fact]
    public void FifoKeepsIngestedFilesInLevelZero()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, new KvOptions { FileSystem = fs, CompactionStyle = CompactionStyle.Fifo });
        db.IngestExternalFile([WriteFile(fs, "fifo1", ["a"])]);
        Assert.Equal(0UL, Current(db).Files(0).Single().LargestSeqno);
        ulong last = db.LatestSequenceNumber;
        db.IngestExternalFile([WriteFile(fs, "fifo2", ["a"])]);
        Assert.Equal(2, Current(db).NumFiles(0));
        Assert.Equal(last + 1, db.LatestSequenceNumber);
        Assert.Equal("fifo2:a", S(db.Get(B("a"))!));
    }

    [Fact]
    public void NonOverlappingFilesOfOneCallShareTheBottommostLevel()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, Options(fs));
        db.IngestExternalFile([WriteFile(fs, "h2", ["x", "y"]), WriteFile(fs, "h1", ["a", "b"])]);
        Assert.Equal(2, Current(db).NumFiles(Version.NumLevels - 1));
        Assert.Equal("h1:a", S(db.Get(B("a"))!));
        Assert.Equal("h2:y", S(db.Get(B("y"))!));
    }

    [Fact]
    public void DeletesAndRangeDeletesInTheFileHideOlderData()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, Options(fs));
        foreach (string k in new[] { "a", "b", "c", "d", "e" })
        {
            db.Put(B(k), B("old"));
        }
        db.Flush();
        db.IngestExternalFile([WriteFile(fs, "del", ["a"], deletes: ["b"], ranges: [("c", "e")])]);
        Assert.Equal(new SortedDictionary<string, string>(StringComparer.Ordinal) { ["a"] = "del:a", ["e"] = "old" }, ReadAll(db));
        db.CompactRange(null, null);
        Assert.Equal(new SortedDictionary<string, string>(StringComparer.Ordinal) { ["a"] = "del:a", ["e"] = "old" }, ReadAll(db));
    }

    [Fact]
    public void FailIfNotBottommostLevelRefusesAnIngestionAboveIt()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = OpenWithTable(fs, "k", "v");
        db.CompactRange(null, null);
        var options = new IngestExternalFileOptions { FailIfNotBottommostLevel = true };
        Assert.Throws<InvalidOperationException>(() => db.IngestExternalFile([WriteFile(fs, "i", ["k"])], options));
        Assert.Equal("v", S(db.Get(B("k"))!));
        Assert.Single(ListFiles(fs, DbPath).Tables);
        db.IngestExternalFile([WriteFile(fs, "j", ["x"])], options);
        Assert.Equal(Version.NumLevels - 1, Newest(db).Level);
    }

    [Fact]
    public void AllowGlobalSeqNoFalseRefusesAnOverlappingFile()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = OpenWithTable(fs, "k", "v");
        Assert.Throws<InvalidOperationException>(() =>
            db.IngestExternalFile([WriteFile(fs, "l", ["k"])], new IngestExternalFileOptions { AllowGlobalSeqNo = false }));
        Assert.Equal("v", S(db.Get(B("k"))!));
        Assert.Single(ListFiles(fs, DbPath).Tables);
    }

    [Fact]
    public void WithoutWriteBackTheManifestSuppliesTheSequenceAcrossReopen()
    {
        FaultInjectionFileSystem fs = NewFs();
        ulong number;
        using (KvDb db = KvDb.Open(DbPath, Options(fs)))
        {
            db.Put(B("k"), B("old"));
            db.Flush();
            db.IngestExternalFile([WriteFile(fs, "m", ["k"])], new IngestExternalFileOptions { WriteGlobalSeqno = false });
            number = Newest(db).File.Number;
            Assert.NotEqual(0UL, Newest(db).File.LargestSeqno);
        }
        Assert.Equal(0UL, RecordedGlobalSeqno(fs, number));
        using (KvDb db = KvDb.Open(DbPath, Options(fs)))
        {
            Assert.Equal("m:k", S(db.Get(B("k"))!));
            db.CompactRange(null, null);
            Assert.Equal("m:k", S(db.Get(B("k"))!));
        }
    }

    [Fact]
    public void MoveFilesLinksAndRemovesTheCallersName()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = OpenWithTable(fs, "k", "old");
        string file = WriteFile(fs, "n", ["k"]);
        var links = 0;
        fs.ShouldFail = (op, _) =>
        {
            links += op == FileOperation.Link ? 1 : 0;
            return false;
        };
        db.IngestExternalFile([file], new IngestExternalFileOptions { MoveFiles = true });
        Assert.Equal(1, links);
        Assert.False(fs.FileExists(file));
        Assert.Equal("n:k", S(db.Get(B("k"))!));
        Assert.Equal(Newest(db).File.LargestSeqno, RecordedGlobalSeqno(fs, Newest(db).File.Number));
    }

    [Fact]
    public void FailedLinkFallsBackToCopy()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, Options(fs));
        string file = WriteFile(fs, "o", ["k"]);
        fs.ShouldFail = (op, _) => op == FileOperation.Link;
        db.IngestExternalFile([file], new IngestExternalFileOptions { MoveFiles = true });
        Assert.Equal("o:k", S(db.Get(B("k"))!));
        Assert.False(fs.FileExists(file), "a successful move removes the caller's name, copied or not");
        Assert.Equal(1L, db.Impl.DefaultFamily.CompactionStats.Level(Version.NumLevels - 1).Count);
        Assert.True(db.Impl.DefaultFamily.CompactionStats.Level(Version.NumLevels - 1).BytesWritten > 0);
    }

    [Fact]
    public void FailedLinkWithoutFallbackFailsAndLeavesNothing()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, Options(fs));
        string file = WriteFile(fs, "p", ["k"]);
        fs.ShouldFail = (op, _) => op == FileOperation.Link;
        Assert.Throws<IOException>(() =>
            db.IngestExternalFile([file], new IngestExternalFileOptions { MoveFiles = true, FailedMoveFallBackToCopy = false }));
        fs.ShouldFail = null;
        Assert.True(fs.FileExists(file));
        Assert.Empty(ListFiles(fs, DbPath).Tables);
        Assert.Null(db.Get(B("k")));
    }

    [Fact]
    public void FailedWriteBackDeletesTheCopiesAndKeepsTheSequence()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = OpenWithTable(fs, "k", "old");
        ulong last = db.LatestSequenceNumber;
        string file = WriteFile(fs, "q", ["k"]);
        fs.ShouldFail = (op, _) => op == FileOperation.WriteAt;
        Assert.Throws<IOException>(() => db.IngestExternalFile([file]));
        fs.ShouldFail = null;
        Assert.Single(ListFiles(fs, DbPath).Tables);
        Assert.Equal(last, db.LatestSequenceNumber);
        Assert.Equal("old", S(db.Get(B("k"))!));
        db.Put(B("after"), B("1")); // writes go on
        db.IngestExternalFile([file]);
        Assert.Equal("q:k", S(db.Get(B("k"))!));
    }

    [Fact]
    public void BadInputIsRefusedWithTypedErrorsAndTheDatabaseUnchanged()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = OpenWithTable(fs, "k", "v");
        string good = WriteFile(fs, "good", ["x"]);
        ulong last = db.LatestSequenceNumber;

        Assert.Throws<FileNotFoundException>(() => db.IngestExternalFile([good, External + "/missing.sst"]));

        // A table of the database itself: no external-file version property.
        string ownTable = FileNames.TableFile(DbPath, Current(db).Files(0)[0].Number);
        string copy = External + "/own.sst";
        fs.WriteAllBytes(copy, fs.ReadAllBytes(ownTable));
        KvCorruptionException notExternal = Assert.Throws<KvCorruptionException>(() => db.IngestExternalFile([good, copy]));
        Assert.Contains("external", notExternal.Message, StringComparison.OrdinalIgnoreCase);

        // An external file whose keys carry a sequence number (a non-zero global seqno).
        string stamped = WriteFile(fs, "stamped", ["y"]);
        using (TableReader reader = TableReader.Open(fs.OpenRandomAccess(stamped), fs.GetFileSize(stamped), new TableOptions(), stamped))
        {
            var seq = new byte[8];
            Coding.EncodeFixed64(seq, 9);
            fs.WriteAt(stamped, (long)reader.Properties.ExternalSstFileGlobalSeqnoOffset, seq);
        }
        KvCorruptionException nonZero = Assert.Throws<KvCorruptionException>(() => db.IngestExternalFile([stamped]));
        Assert.Contains("non zero sequence number", nonZero.Message, StringComparison.Ordinal);

        // Not a table at all.
        fs.WriteAllBytes(External + "/junk.sst", new byte[100]);
        Assert.Throws<KvCorruptionException>(() => db.IngestExternalFile([External + "/junk.sst"]));

        // A file written for another column family.
        string other = WriteFile(fs, "other", ["z"], columnFamilyId: 5);
        Assert.Throws<ArgumentException>(() => db.IngestExternalFile([other]));

        Assert.Throws<ArgumentException>(() => db.IngestExternalFile([]));

        Assert.Equal(last, db.LatestSequenceNumber);
        Assert.Single(ListFiles(fs, DbPath).Tables);
        Assert.Equal(new SortedDictionary<string, string>(StringComparer.Ordinal) { ["k"] = "v" }, ReadAll(db));
        db.IngestExternalFile([good]);
        Assert.Equal("good:x", S(db.Get(B("x"))!));
    }

    [Fact]
    public void VerifyChecksumsBeforeIngestRefusesADamagedDataBlock()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, Options(fs));
        string file = WriteFile(fs, "damaged", Enumerable.Range(0, 3000).Select(i => $"k{i:D5}"));
        byte[] bytes = fs.ReadAllBytes(file);
        bytes[bytes.Length / 3] ^= 0x40; // inside a data block in the middle: neither the first nor the last
        fs.WriteAllBytes(file, bytes);
        Assert.Throws<KvCorruptionException>(() => db.IngestExternalFile([file], new IngestExternalFileOptions { VerifyChecksumsBeforeIngest = true }));
        Assert.Empty(ListFiles(fs, DbPath).Tables);
        Assert.Equal(0, TotalTableFiles(db));
        // Without the option only the blocks ingestion reads are checked (RocksDB's default): it goes in.
        db.IngestExternalFile([file]);
        Assert.Equal(1, TotalTableFiles(db));
    }

    [Fact]
    public void ColumnFamilyOverloadIngestsIntoThatFamilyAndChecksItsId()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, Options(fs));
        ColumnFamilyHandle cf = db.CreateColumnFamily("cf1", new ColumnFamilyOptions { DisableAutoCompactions = true });
        uint id = db.Impl.Resolve(cf).Id;
        db.IngestExternalFile(cf, [WriteFile(fs, "own", ["k"], columnFamilyId: id)]);
        Assert.Equal("own:k", S(db.Get(cf, B("k"))!));
        Assert.Null(db.Get(B("k")));
        Assert.Throws<ArgumentException>(() => db.IngestExternalFile([WriteFile(fs, "wrong", ["w"], columnFamilyId: id)]));
        db.IngestExternalFile(cf, [WriteFile(fs, "any", ["u"])]); // 0x7FFFFFFF: any family
        Assert.Equal("any:u", S(db.Get(cf, B("u"))!));
        db.DropColumnFamily(cf);
        Assert.Throws<ArgumentException>(() => db.IngestExternalFile(cf, [WriteFile(fs, "late", ["v"])]));
    }

    [Fact]
    public void PowerLossRightAfterIngestionKeepsTheData()
    {
        foreach (bool move in new[] { false, true })
        {
            FaultInjectionFileSystem fs = NewFs();
            KvDb db = KvDb.Open(DbPath, Options(fs));
            db.Put(B("k"), B("old"), new WriteOptions { Sync = true });
            db.Flush();
            // The caller's file is written but neither it nor its directory synced: ingestion must sync what it keeps.
            string file = WriteFile(fs, "power", ["k", "n"]);
            db.IngestExternalFile([file], new IngestExternalFileOptions { MoveFiles = move });
            Abandon(fs, db, powerLoss: true);
            using KvDb reopened = KvDb.Open(DbPath, Options(fs));
            Assert.Equal("power:k", S(reopened.Get(B("k"))!));
            Assert.Equal("power:n", S(reopened.Get(B("n"))!));
            reopened.Put(B("k"), B("later"));
            Assert.Equal("later", S(reopened.Get(B("k"))!));
        }
    }

    [Fact]
    public void WritesRacingAnIngestionAreOrderedAroundIt()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, Options(fs));
        var files = new List<string>();
        for (int i = 0; i < 20; i++)
        {
            files.Add(WriteFile(fs, "race" + i, ["shared", $"only{i:D2}"]));
        }
        int stop = 0;
        Exception? writerError = null;
        var writer = new Thread(() =>
        {
            try
            {
                for (long n = 0; Volatile.Read(ref stop) == 0; n++)
                {
                    db.Put(B($"w{n % 500:D3}"), B(n.ToString(System.Globalization.CultureInfo.InvariantCulture)));
                }
            }
            catch (Exception e)
            {
                writerError = e;
            }
        });
        writer.Start();
        foreach (string f in files)
        {
            db.IngestExternalFile([f]);
        }
        Volatile.Write(ref stop, 1);
        writer.Join();
        Assert.Null(writerError);
        // Each ingestion overlaps the previous one ("shared"), so each got a new sequence: the last wins.
        Assert.Equal("race19:shared", S(db.Get(B("shared"))!));
        var seqs = new HashSet<ulong>();
        for (int l = 0; l < Version.NumLevels; l++)
        {
            foreach (FileMetaData f in Current(db).Files(l))
            {
                Assert.True(f.LargestSeqno <= db.LatestSequenceNumber);
                if (f.LargestSeqno != 0)
                {
                    Assert.True(seqs.Add(f.LargestSeqno), $"sequence {f.LargestSeqno} used twice");
                }
            }
        }
        db.Flush();
        db.CompactRange(null, null);
        Assert.Equal("race19:shared", S(db.Get(B("shared"))!));
        for (int i = 0; i < 20; i++)
        {
            Assert.Equal($"race{i}:only{i:D2}", S(db.Get(B($"only{i:D2}"))!));
        }
    }
}
