using KvEngine.Storage;
using static KvEngine.Tests.Db.DbTestUtil;

namespace KvEngine.Tests.Db.Checkpoints;

/// <summary>
/// GetLiveFiles, GetSortedWalFiles and DisableFileDeletions / EnableFileDeletions (RocksDB 7.8's
/// counting semantics): the live-file list names exactly the files a backup needs and a copy of
/// them (MANIFEST cut at the returned size) opens; obsolete files stay while deletions are
/// disabled, however many flushes and compactions run, and go when the count is back at zero.
/// </summary>
public sealed class LiveFilesTests
{
    [Fact]
    public void GetLiveFilesNamesTheTablesCurrentManifestAndOptions()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, SmallOptions(fs));
        ColumnFamilyHandle cf = db.CreateColumnFamily("cf");
        db.Put(B("a"), B("1"));
        db.Put(cf, B("b"), B("2"));
        IReadOnlyList<string> files = db.GetLiveFiles(out ulong manifestSize);
        List<string> tables = ListFiles(fs, DbPath).Tables;
        Assert.Equal(2, tables.Count); // the flush made one table per family
        Assert.Equal(tables.Select(t => "/" + t).Concat(["/CURRENT"]), files.Take(tables.Count + 1));
        string manifest = Assert.Single(files, f => f.StartsWith("/MANIFEST-", StringComparison.Ordinal));
        Assert.Equal("MANIFEST" + manifest[9..] + "\n", "MANIFEST" + S(fs.ReadAllBytes(DbPath + "/CURRENT"))[8..]);
        Assert.Equal((ulong)fs.GetFileSize(DbPath + manifest), manifestSize);
        string options = Assert.Single(files, f => f.StartsWith("/OPTIONS-", StringComparison.Ordinal));
        Assert.True(fs.FileExists(DbPath + options));
        Assert.Equal(files.Count, tables.Count + 3);
    }

    [Fact]
    public void WithoutAFlushUnflushedDataIsInTheSortedWalFiles()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, SmallOptions(fs));
        db.Put(B("a"), B("1"));
        ulong seq = db.LatestSequenceNumber;
        IReadOnlyList<string> files = db.GetLiveFiles(out _, flushMemtable: false);
        Assert.DoesNotContain(files, f => f.EndsWith(".sst", StringComparison.Ordinal));
        WalFileInfo wal = Assert.Single(db.GetSortedWalFiles());
        Assert.Equal(seq, wal.StartSequence);
        Assert.Equal(fs.GetFileSize(DbPath + wal.PathName), wal.SizeBytes);
        Assert.Matches("^/[0-9]{6}\\.log$", wal.PathName);
        db.Flush();
        WalFileInfo after = Assert.Single(db.GetSortedWalFiles()); // the flushed WAL is obsolete
        Assert.True(after.LogNumber > wal.LogNumber);
        Assert.Equal(0UL, after.StartSequence);
    }

    [Fact]
    public void ABackupOfTheLiveFilesOpens()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, SmallOptions(fs));
        for (int i = 0; i < 2000; i++)
        {
            db.Put(B($"k{i:D5}"), B(new string('v', 30)));
        }
        db.DisableFileDeletions();
        IReadOnlyList<string> files = db.GetLiveFiles(out ulong manifestSize);
        IReadOnlyList<WalFileInfo> wals = db.GetSortedWalFiles(); // KvEngine's MANIFEST names its live WALs
        // Writes, flushes and compactions go on while the backup copies.
        for (int i = 0; i < 2000; i++)
        {
            db.Put(B($"k{i:D5}"), B("new"));
        }
        db.CompactRange(null, null);
        string backup = Parent + "/backup";
        fs.CreateDirectory(backup);
        foreach (string f in files)
        {
            byte[] bytes = fs.ReadAllBytes(DbPath + f);
            fs.WriteAllBytes(backup + f, f.StartsWith("/MANIFEST-", StringComparison.Ordinal) ? bytes.AsSpan(0, (int)manifestSize) : bytes);
        }
        foreach (WalFileInfo w in wals)
        {
            fs.WriteAllBytes(backup + w.PathName, fs.ReadAllBytes(DbPath + w.PathName).AsSpan(0, (int)w.SizeBytes));
        }
        db.EnableFileDeletions();
        using KvDb copy = KvDb.Open(backup, SmallOptions(fs));
        SortedDictionary<string, string> all = ReadAll(copy);
        Assert.Equal(2000, all.Count);
        Assert.All(all.Values, v => Assert.Equal(new string('v', 30), v));
    }

    [Fact]
    public void AFlushBetweenGetLiveFilesAndGetSortedWalFilesLosesNoWalTheBackupNeeds()
    {
        // The documented sequence, with a flush (here explicit; in life an automatic one) between
        // the two listings: the MANIFEST copy still names the WAL the flush made obsolete, so the
        // WAL list must still name it too, or the backup loses those writes (and will not open).
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, SmallOptions(fs));
        db.Put(B("a"), B("1"));
        db.DisableFileDeletions();
        IReadOnlyList<string> files = db.GetLiveFiles(out ulong manifestSize, flushMemtable: false);
        db.Flush();
        IReadOnlyList<WalFileInfo> wals = db.GetSortedWalFiles();
        string backup = Parent + "/backup-flushed";
        fs.CreateDirectory(backup);
        foreach (string f in files)
        {
            byte[] bytes = fs.ReadAllBytes(DbPath + f);
            fs.WriteAllBytes(backup + f, f.StartsWith("/MANIFEST-", StringComparison.Ordinal) ? bytes.AsSpan(0, (int)manifestSize) : bytes);
        }
        foreach (WalFileInfo w in wals)
        {
            fs.WriteAllBytes(backup + w.PathName, fs.ReadAllBytes(DbPath + w.PathName).AsSpan(0, (int)w.SizeBytes));
        }
        db.EnableFileDeletions();
        using KvDb copy = KvDb.Open(backup, SmallOptions(fs));
        Assert.Equal("1", S(copy.Get(B("a"))!));
    }

    [Fact]
    public void ObsoleteFilesStayUntilDeletionsAreEnabledAgainAndDisableCounts()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, SmallOptions(fs));
        for (int i = 0; i < 100; i++)
        {
            db.Put(B($"k{i:D3}"), B("v"));
        }
        db.Flush();
        List<string> kept = ListFiles(fs, DbPath).Tables;
        List<string> keptLogs = ListFiles(fs, DbPath).Logs;
        db.DisableFileDeletions();
        db.DisableFileDeletions();
        db.Put(B("k000"), B("w"));
        db.Flush();
        db.CompactRange(null, null); // every table so far is now obsolete
        db.CreateColumnFamily("cf"); // new OPTIONS files; the older ones stay too
        db.CreateColumnFamily("cf2");
        (List<string> tables, List<string> logs, _, _) = ListFiles(fs, DbPath);
        Assert.All(kept, t => Assert.Contains(t, tables));
        Assert.All(keptLogs, l => Assert.Contains(l, logs));
        int optionsFiles = fs.GetChildren(DbPath).Count(n => n.StartsWith("OPTIONS-", StringComparison.Ordinal));
        Assert.True(optionsFiles >= 3, $"{optionsFiles} OPTIONS files");

        db.EnableFileDeletions(force: false); // 2 -> 1: still disabled
        db.Flush();
        Assert.All(kept, t => Assert.Contains(t, ListFiles(fs, DbPath).Tables));

        db.EnableFileDeletions(force: false); // 1 -> 0: the deferred sweep runs now
        (tables, logs, _, _) = ListFiles(fs, DbPath);
        Assert.All(kept, t => Assert.DoesNotContain(t, tables));
        Assert.All(keptLogs, l => Assert.DoesNotContain(l, logs));
        Assert.Equal(2, fs.GetChildren(DbPath).Count(n => n.StartsWith("OPTIONS-", StringComparison.Ordinal)));
        Assert.Equal("w", S(db.Get(B("k000"))));
    }

    [Fact]
    public void ForceEnablesWhateverTheCountAndEnablingTooOftenIsHarmless()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, SmallOptions(fs));
        db.Put(B("a"), B("1"));
        db.Flush();
        List<string> kept = ListFiles(fs, DbPath).Tables;
        db.DisableFileDeletions();
        db.DisableFileDeletions();
        db.DisableFileDeletions();
        db.CompactRange(null, null);
        db.Put(B("a"), B("2"));
        db.Flush();
        db.CompactRange(null, null);
        Assert.All(kept, t => Assert.Contains(t, ListFiles(fs, DbPath).Tables));
        db.EnableFileDeletions(); // force, RocksDB 7.8's default
        Assert.All(kept, t => Assert.DoesNotContain(t, ListFiles(fs, DbPath).Tables));
        db.EnableFileDeletions(force: false);
        db.EnableFileDeletions();
        Assert.False(db.Impl.FileDeletionsDisabled);
        db.DisableFileDeletions(); // the count never went below zero
        Assert.True(db.Impl.FileDeletionsDisabled);
        db.EnableFileDeletions(force: false);
        Assert.False(db.Impl.FileDeletionsDisabled);
    }

    [Fact]
    public void ObsoleteFilesKeptAtCloseGoAtTheNextOpen()
    {
        FaultInjectionFileSystem fs = NewFs();
        List<string> kept;
        using (KvDb db = KvDb.Open(DbPath, SmallOptions(fs)))
        {
            db.Put(B("a"), B("1"));
            db.Flush();
            kept = ListFiles(fs, DbPath).Tables;
            db.DisableFileDeletions();
            db.Put(B("a"), B("2"));
            db.Flush();
            db.CompactRange(null, null);
        }
        Assert.All(kept, t => Assert.Contains(t, ListFiles(fs, DbPath).Tables)); // close honours the count too
        using KvDb again = KvDb.Open(DbPath, SmallOptions(fs));
        Assert.All(kept, t => Assert.DoesNotContain(t, ListFiles(fs, DbPath).Tables));
        Assert.Equal("2", S(again.Get(B("a"))));
    }
}
