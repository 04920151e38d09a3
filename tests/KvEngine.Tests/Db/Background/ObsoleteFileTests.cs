using KvEngine.Storage;
using KvEngine.Versions;

namespace KvEngine.Tests.Db.Background;

/// <summary>
/// Files nothing needs are deleted, and files something still needs are not: after flushes and
/// reopens the directory holds exactly the MANIFEST CURRENT names, the tables its version lists
/// and the WALs at or above its log number; orphans of any kind are swept at open; an open
/// iterator keeps reading what it pinned across flushes that retire its memtables and WALs.
/// (Without compaction no table ever becomes obsolete, so table pinning by iterators cannot be
/// exercised yet; the WAL and MANIFEST side is.)
/// </summary>
public sealed class ObsoleteFileTests
{
    [Fact]
    public void AfterFlushesAndReopensOnlyLiveFilesRemain()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        KvOptions o = DbTestUtil.SmallOptions(fs, 16 << 10, 3);
        // The directory is checked right after open, while background compactions could still be
        // replacing files; compaction's own cleanup is checked in Compaction/CompactionModelTests.
        o.DisableAutoCompactions = true;
        var rng = new Random(5);
        var model = new SortedDictionary<string, string>(StringComparer.Ordinal);
        for (int session = 0; session < 6; session++)
        {
            using (KvDb db = KvDb.Open(DbTestUtil.DbPath, o))
            {
                // Right after open: everything replayed is in tables, one fresh WAL.
                AssertOnlyLiveFiles(fs, exactlyOneLog: true, $"session {session} after open");
                Assert.Equal(model, DbTestUtil.ReadAll(db));
                int writes = rng.Next(100, 800);
                for (int i = 0; i < writes; i++)
                {
                    string k = $"o{rng.Next(500):D4}";
                    if (rng.Next(8) == 0)
                    {
                        db.Delete(DbTestUtil.B(k));
                        model.Remove(k);
                    }
                    else
                    {
                        string v = $"{session}.{i}." + new string('z', rng.Next(200));
                        db.Put(DbTestUtil.B(k), DbTestUtil.B(v));
                        model[k] = v;
                    }
                    if (rng.Next(200) == 0)
                    {
                        db.Flush();
                    }
                }
            }
            // After a clean close: WALs of unflushed memtables may remain, nothing else.
            AssertOnlyLiveFiles(fs, exactlyOneLog: false, $"session {session} after close");
        }
    }

    [Fact]
    public void OrphansAreSweptAtOpen()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        var o = new KvOptions { FileSystem = fs };
        ulong nextFileNumber;
        using (KvDb db = KvDb.Open(DbTestUtil.DbPath, o))
        {
            db.Put("a"u8, "1"u8);
            db.Flush();
            db.Put("a"u8, "1"u8);
            db.Flush();
            db.CompactRange(null, null); // its inputs' numbers are free again
            db.Put("b"u8, "2"u8);
            nextFileNumber = ulong.Parse(db.GetProperty("kvengine.next-file-number")!, System.Globalization.CultureInfo.InvariantCulture);
        }
        string dir = DbTestUtil.DbPath;
        string current = Path.GetFileName(DbTestUtil.CurrentManifest(fs, dir));
        ulong currentNumber = ulong.Parse(current.AsSpan("MANIFEST-".Length), System.Globalization.CultureInfo.InvariantCulture);
        // A table no version names, numbered below the next file number the MANIFEST records (a
        // compaction input's number, which the compaction's edit covers): an obsolete table a
        // crash left before the sweep. (One numbered at or above the recorded next file number
        // would prove lost edits and refuse the open: ManifestGuardTests.)
        ulong orphanNumber = currentNumber + 1;
        while (fs.GetChildren(dir).Any(n => n.Contains($"{orphanNumber:D6}", StringComparison.Ordinal)))
        {
            orphanNumber++;
        }
        Assert.True(orphanNumber < nextFileNumber, $"no free number below the next file number {nextFileNumber}");
        string orphan = $"{orphanNumber:D6}.sst";
        fs.WriteAllBytes(Path.Combine(dir, orphan), new byte[100]);
        fs.WriteAllBytes(Path.Combine(dir, "000001.log"), new byte[10]);      // a WAL below the log number
        fs.WriteAllBytes(Path.Combine(dir, "000778.dbtmp"), "x"u8);           // a CURRENT update cut short
        fs.WriteAllBytes(Path.Combine(dir, "OPTIONS-000779.dbtmp"), "x"u8);   // an OPTIONS write cut short
        string older = $"MANIFEST-{currentNumber - 1:D6}";
        Assert.False(fs.FileExists(Path.Combine(dir, older)));
        fs.WriteAllBytes(Path.Combine(dir, older), new byte[7]);              // an older MANIFEST
        fs.WriteAllBytes(Path.Combine(dir, "notes.txt"), "keep me"u8);        // not ours
        using (KvDb db = KvDb.Open(DbTestUtil.DbPath, o))
        {
            Assert.Equal("1"u8.ToArray(), db.Get("a"u8));
            Assert.Equal("2"u8.ToArray(), db.Get("b"u8));
            IReadOnlyList<string> names = fs.GetChildren(dir);
            Assert.DoesNotContain(orphan, names);
            Assert.DoesNotContain("000001.log", names);
            Assert.DoesNotContain("000778.dbtmp", names);
            Assert.DoesNotContain("OPTIONS-000779.dbtmp", names);
            Assert.DoesNotContain(older, names);
            Assert.Contains("notes.txt", names);
            // New files are numbered past every name seen, so no orphan number is reused.
            ulong next = ulong.Parse(db.GetProperty("kvengine.next-file-number")!, System.Globalization.CultureInfo.InvariantCulture);
            Assert.True(next > 778, $"next file number {next} reuses an orphan's");
        }
        (List<string> tables, List<string> logs, List<string> manifests, List<string> other) = DbTestUtil.ListFiles(fs, dir);
        Assert.Equal(new[] { "notes.txt" }, other);
        AssertOnlyLiveFiles(fs, exactlyOneLog: true, "after sweep", ignore: "notes.txt");
        Assert.Single(manifests);
        Assert.NotEmpty(tables);
        Assert.Single(logs);
    }

    [Fact]
    public void FailedFlushLeavesNothingTheNextOpenCannotUse()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        KvOptions o = DbTestUtil.SmallOptions(fs);
        var model = new SortedDictionary<string, string>(StringComparer.Ordinal);
        KvDb db = KvDb.Open(DbTestUtil.DbPath, o);
        for (int i = 0; i < 100; i++)
        {
            db.Put(DbTestUtil.B($"f{i:D3}"), DbTestUtil.B($"v{i}"));
            model[$"f{i:D3}"] = $"v{i}";
        }
        fs.ShouldFail = static (op, path) => op == FileOperation.Sync && path.Contains("MANIFEST", StringComparison.Ordinal);
        Assert.Throws<KvException>(() => db.Flush());
        // The database refuses writes after the background error, and reads go on.
        Assert.Throws<KvWriteStoppedException>(() => db.Put("x"u8, "y"u8));
        Assert.Equal(model, DbTestUtil.ReadAll(db));
        Assert.Equal("1", db.GetProperty("rocksdb.background-errors"));
        try
        {
            db.Dispose();
        }
        catch (KvException)
        {
            // Closing after a background error may report it again.
        }
        fs.ShouldFail = null;
        using (db = KvDb.Open(DbTestUtil.DbPath, o))
        {
            Assert.Equal(model, DbTestUtil.ReadAll(db));
            AssertOnlyLiveFiles(fs, exactlyOneLog: true, "after reopen");
        }
    }

    [Fact]
    public void WalsAreDeletedOnceTheirMemtablesAreFlushed()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        KvOptions options = DbTestUtil.SmallOptions(fs, 16 << 10, 3);
        // About WALs and flushes: a compaction creating and deleting tables meanwhile would race
        // the listing of live files below.
        options.DisableAutoCompactions = true;
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, options);
        for (int i = 0; i < 2000; i++)
        {
            db.Put(DbTestUtil.B($"w{i:D5}"), DbTestUtil.B(new string('w', 50)));
        }
        Assert.NotEqual(0, DbTestUtil.TotalTableFiles(db));
        db.Flush();
        // The sweep follows the flush on the background thread: allow it a moment.
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(10);
        while (DbTestUtil.ListFiles(fs, DbTestUtil.DbPath).Logs.Count > 1 && DateTime.UtcNow < deadline)
        {
            Thread.Sleep(5);
        }
        AssertOnlyLiveFiles(fs, exactlyOneLog: true, "after Flush");
        Assert.Single(DbTestUtil.ListFiles(fs, DbTestUtil.DbPath).Manifests);
    }

    [Fact]
    public void OpenIteratorKeepsItsViewAcrossFlushesThatRetireItsMemtables()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, DbTestUtil.SmallOptions(fs, 16 << 10, 3));
        var model = new SortedDictionary<string, string>(StringComparer.Ordinal);
        for (int i = 0; i < 600; i++)
        {
            string k = $"i{i % 300:D4}";
            string v = $"first-{i}-" + new string('a', i % 50);
            db.Put(DbTestUtil.B(k), DbTestUtil.B(v));
            model[k] = v;
        }
        // Pinned now: the mutable memtable, maybe immutable ones, the tables so far.
        using KvIterator it = db.NewIterator();
        using Snapshot snap = db.GetSnapshot();
        List<string> logsBefore = DbTestUtil.ListFiles(fs, DbTestUtil.DbPath).Logs;

        for (int round = 0; round < 5; round++)
        {
            for (int i = 0; i < 300; i++)
            {
                string k = $"i{i:D4}";
                if (i % 3 == round % 3)
                {
                    db.Delete(DbTestUtil.B(k));
                }
                else
                {
                    db.Put(DbTestUtil.B(k), DbTestUtil.B($"later-{round}-" + new string('b', 100)));
                }
            }
            db.Flush();
        }
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(10);
        while (DbTestUtil.ListFiles(fs, DbTestUtil.DbPath).Logs.Intersect(logsBefore).Any() && DateTime.UtcNow < deadline)
        {
            Thread.Sleep(5);
        }
        Assert.Empty(DbTestUtil.ListFiles(fs, DbTestUtil.DbPath).Logs.Intersect(logsBefore));

        // The iterator still reads the memtables it pinned, whose WALs are gone.
        var seen = new SortedDictionary<string, string>(StringComparer.Ordinal);
        for (it.SeekToFirst(); it.Valid; it.Next())
        {
            seen.Add(DbTestUtil.S(it.Key), DbTestUtil.S(it.Value));
        }
        Assert.Equal(model, seen);
        // The snapshot reads the same data, now from tables.
        Assert.Equal(model, DbTestUtil.ReadAll(db, new ReadOptions { Snapshot = snap }));
        foreach (KeyValuePair<string, string> e in model)
        {
            Assert.Equal(e.Value, DbTestUtil.S(db.Get(DbTestUtil.B(e.Key), new ReadOptions { Snapshot = snap })));
        }
    }

    /// <summary>
    /// The directory holds CURRENT, LOCK, IDENTITY, exactly the MANIFEST CURRENT names, exactly
    /// the tables its version lists, and WALs numbered at or above its log number only.
    /// </summary>
    private static void AssertOnlyLiveFiles(FaultInjectionFileSystem fs, bool exactlyOneLog, string context, string? ignore = null)
    {
        string dir = DbTestUtil.DbPath;
        var versions = new KvEngine.Versions.VersionSet(dir, fs);
        versions.Recover();
        HashSet<ulong> live = versions.LiveTableNumbers();
        ulong logNumber = versions.MinLogNumberToKeep;
        string manifest = Path.GetFileName(DbTestUtil.CurrentManifest(fs, dir));
        versions.Dispose();

        (List<string> tables, List<string> logs, List<string> manifests, List<string> other) = DbTestUtil.ListFiles(fs, dir);
        other.Remove(ignore ?? string.Empty);
        int optionsFiles = fs.GetChildren(dir).Count(DbTestUtil.IsOptionsFile);
        Assert.True(optionsFiles <= KvEngine.OptionsFile.OptionsFileStore.FilesKept, $"{context}: {optionsFiles} OPTIONS files");
        Assert.True(other.Count == 0, $"{context}: unexpected files {string.Join(", ", other)}");
        Assert.True(manifests.Count == 1 && manifests[0] == manifest, $"{context}: MANIFESTs {string.Join(", ", manifests)}, CURRENT names {manifest}");
        var tableNumbers = new HashSet<ulong>();
        foreach (string t in tables)
        {
            tableNumbers.Add(ulong.Parse(t.AsSpan(0, t.Length - 4), System.Globalization.CultureInfo.InvariantCulture));
        }
        Assert.True(live.SetEquals(tableNumbers),
            $"{context}: tables on disk {string.Join(", ", tableNumbers.Order())} but live {string.Join(", ", live.Order())}");
        foreach (string l in logs)
        {
            ulong n = ulong.Parse(l.AsSpan(0, l.Length - 4), System.Globalization.CultureInfo.InvariantCulture);
            Assert.True(n >= logNumber, $"{context}: {l} is below the log number {logNumber}");
        }
        if (exactlyOneLog)
        {
            Assert.True(logs.Count == 1, $"{context}: WALs {string.Join(", ", logs)}");
        }
    }
}
