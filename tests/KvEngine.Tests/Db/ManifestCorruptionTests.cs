using System.Text;
using KvEngine.Storage;

namespace KvEngine.Tests.Db;

/// <summary>
/// Damaged CURRENT and MANIFEST files at open. The MANIFEST is read strictly: any damage is a
/// <see cref="KvCorruptionException"/> at open. An incomplete final record (a write cut short) ends
/// the log, as in RocksDB 7.8 — and so do two kinds of single-bit damage: a length enlarged past
/// the end of the file, and a record type turned recyclable (5..8). Where RocksDB then opens an
/// older state (deleted values back, keys lost), KvEngine notices that the lost edits had made a
/// WAL it tracks obsolete (that WAL is gone) and refuses; <see cref="KvOptions.BestEffortsRecovery"/>
/// rebuilds the latest state from the tables the lost edits had written.
/// </summary>
public sealed class ManifestCorruptionTests
{
    [Fact]
    public void IntactDatabaseOpensWithTheLatestState()
    {
        Fixture f = Fixture.Build();
        using KvDb db = f.Open();
        Assert.Equal(f.States[2], DbTestUtil.ReadAll(db));
    }

    /// <summary>
    /// The last flush's records are cut at several points. Its table exists and its WAL was
    /// deleted (as after a completed flush whose MANIFEST was later damaged): the open is refused,
    /// naming the lost edits, unless only the final WAL-deletion record was cut (every edit is
    /// intact). Best-efforts recovery gets the latest state back in every case.
    /// </summary>
    [Fact]
    public void TruncatedTailIsRefusedOrIntactAndBestEffortsRebuildsIt()
    {
        Fixture f = Fixture.Build();
        int refused = 0;
        for (long cut = f.Starts[2] + 1; cut < f.Size; cut += 3)
        {
            f.Snapshot.Restore(f.Fs);
            f.Fs.WriteAllBytes(f.Manifest, f.Snapshot.Bytes(f.ManifestName).AsSpan(0, (int)cut));
            try
            {
                using KvDb db = f.Open();
                Assert.Equal(f.States[2], DbTestUtil.ReadAll(db));
            }
            catch (KvCorruptionException e)
            {
                Assert.Contains("lost edits", e.Message, StringComparison.Ordinal);
                Assert.Contains("BestEffortsRecovery", e.Message, StringComparison.Ordinal);
                refused++;
            }

            f.Snapshot.Restore(f.Fs);
            f.Fs.WriteAllBytes(f.Manifest, f.Snapshot.Bytes(f.ManifestName).AsSpan(0, (int)cut));
            KvOptions o = f.Options();
            o.BestEffortsRecovery = true;
            using (KvDb db = KvDb.Open(DbTestUtil.DbPath, o))
            {
                Assert.Equal(f.States[2], DbTestUtil.ReadAll(db));
                db.Put("after"u8, "repair"u8);
            }
            // The rebuilt database is whole: it opens normally, with the write made after the repair.
            using (KvDb db = f.Open())
            {
                SortedDictionary<string, string> expected = new(f.States[2], StringComparer.Ordinal) { ["after"] = "repair" };
                Assert.Equal(expected, DbTestUtil.ReadAll(db));
            }
        }
        Assert.True(refused > 0, "no truncation was refused");
    }

    /// <summary>
    /// Every other byte of the MANIFEST damaged, opened with best-efforts recovery: the latest
    /// state comes back whatever record the damage hits, except the first (the snapshot with the
    /// database-wide fields), whose damage still fails the open.
    /// </summary>
    [Fact]
    public void BestEffortsRecoveryOpensTheLatestStatePastAnyDamagedRecord()
    {
        Fixture f = Fixture.Build();
        byte[] original = f.Snapshot.Bytes(f.ManifestName);
        KvOptions o = f.Options();
        o.BestEffortsRecovery = true;
        int refused = 0;
        for (int offset = 0; offset < original.Length; offset += 2)
        {
            f.Snapshot.Restore(f.Fs);
            byte[] damaged = (byte[])original.Clone();
            damaged[offset] ^= (byte)(1 << (offset * 5 % 8));
            f.Fs.WriteAllBytes(f.Manifest, damaged);
            try
            {
                using KvDb db = KvDb.Open(DbTestUtil.DbPath, o);
                SortedDictionary<string, string> got = DbTestUtil.ReadAll(db); Assert.True(f.States[2].SequenceEqual(got), $"damage at byte {offset} (first record ends {f.FirstRecordEnd}, starts {string.Join(",", f.Starts)}, size {f.Size}) opened another state: {got.Count} keys vs {f.States[2].Count}, equal to state1 {f.States[1].SequenceEqual(got)}, state0 {f.States[0].SequenceEqual(got)}");
            }
            catch (KvCorruptionException)
            {
                Assert.True(offset < f.FirstRecordEnd, $"damage at byte {offset}, past the first record, failed the open");
                refused++;
            }
        }
        Assert.True(refused > 0, "damage to the snapshot record never failed the open");
    }

    /// <summary>
    /// A compaction's edit is lost from the MANIFEST's end after its inputs were deleted: no WAL
    /// moved, but the missing inputs prove the loss. The refused open deletes nothing, and
    /// best-efforts recovery gets every key back from the compaction's output, which the
    /// MANIFEST does not name.
    /// </summary>
    [Fact]
    public void LostCompactionEditIsRefusedWithoutDeletingItsOutput()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        var o = new KvOptions { FileSystem = fs, WriteBufferSize = 1 << 20, DisableAutoCompactions = true };
        var model = new SortedDictionary<string, string>(StringComparer.Ordinal);
        string manifest;
        long beforeCompaction;
        using (KvDb db = KvDb.Open(DbTestUtil.DbPath, o))
        {
            for (int round = 0; round < 3; round++)
            {
                for (int i = 0; i < 200; i++)
                {
                    string k = $"k{(i * 7 + round) % 300:D3}";
                    string v = $"r{round}-{i}";
                    db.Put(DbTestUtil.B(k), DbTestUtil.B(v));
                    model[k] = v;
                }
                db.Delete(DbTestUtil.B($"k{round:D3}"));
                model.Remove($"k{round:D3}");
                db.Flush();
            }
            manifest = DbTestUtil.CurrentManifest(fs, DbTestUtil.DbPath);
            beforeCompaction = fs.GetFileSize(manifest);
            db.CompactRange(null, null);
        }
        byte[] bytes = fs.ReadAllBytes(manifest);
        Assert.True(bytes.Length > beforeCompaction, "the compaction wrote no edit");
        fs.WriteAllBytes(manifest, bytes.AsSpan(0, (int)beforeCompaction));
        List<string> tablesBefore = DbTestUtil.ListFiles(fs, DbTestUtil.DbPath).Tables;

        KvCorruptionException e = Assert.Throws<KvCorruptionException>(() => KvDb.Open(DbTestUtil.DbPath, o).Dispose());
        Assert.Contains("lost edits", e.Message, StringComparison.Ordinal);
        Assert.Equal(tablesBefore, DbTestUtil.ListFiles(fs, DbTestUtil.DbPath).Tables);

        o.BestEffortsRecovery = true;
        using (KvDb db = KvDb.Open(DbTestUtil.DbPath, o))
        {
            Assert.Equal(model, DbTestUtil.ReadAll(db));
        }
        o.BestEffortsRecovery = false;
        using (KvDb db = KvDb.Open(DbTestUtil.DbPath, o))
        {
            Assert.Equal(model, DbTestUtil.ReadAll(db));
        }
    }

    /// <summary>A live WAL deleted by hand is the same evidence as a lost edit: refused, naming it.</summary>
    [Fact]
    public void MissingLiveWalIsRefusedAndBestEffortsKeepsTheRest()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        var o = new KvOptions { FileSystem = fs, WriteBufferSize = 1 << 20 };
        using (KvDb db = KvDb.Open(DbTestUtil.DbPath, o))
        {
            db.Put("flushed"u8, "1"u8);
            db.Flush();
            db.Put("only-in-wal"u8, "2"u8);
        }
        List<string> logs = DbTestUtil.ListFiles(fs, DbTestUtil.DbPath).Logs;
        Assert.Single(logs);
        fs.DeleteFile(Path.Combine(DbTestUtil.DbPath, logs[0]));
        KvCorruptionException e = Assert.Throws<KvCorruptionException>(() => KvDb.Open(DbTestUtil.DbPath, o).Dispose());
        Assert.Contains(logs[0], e.Message, StringComparison.Ordinal);
        o.BestEffortsRecovery = true;
        using (KvDb db = KvDb.Open(DbTestUtil.DbPath, o))
        {
            Assert.Equal(new SortedDictionary<string, string>(StringComparer.Ordinal) { ["flushed"] = "1" }, DbTestUtil.ReadAll(db));
        }
    }

    /// <summary>
    /// The last flush's edit is lost and its table damaged: best-efforts recovery moves the table
    /// to lost/ rather than deleting it, and opens with what the other files hold.
    /// </summary>
    [Fact]
    public void UnreadableAdoptedTableMovesToLost()
    {
        Fixture f = Fixture.Build();
        f.Fs.WriteAllBytes(f.Manifest, f.Snapshot.Bytes(f.ManifestName).AsSpan(0, (int)f.Starts[2] + 3));
        List<string> tables = DbTestUtil.ListFiles(f.Fs, DbTestUtil.DbPath).Tables;
        string newest = tables.Max(StringComparer.Ordinal)!;
        string path = Path.Combine(DbTestUtil.DbPath, newest);
        byte[] bytes = f.Fs.ReadAllBytes(path);
        f.Fs.WriteAllBytes(path, bytes.AsSpan(0, bytes.Length / 2));
        Assert.Throws<KvCorruptionException>(() => f.Open().Dispose());
        KvOptions o = f.Options();
        o.BestEffortsRecovery = true;
        using (KvDb db = KvDb.Open(DbTestUtil.DbPath, o))
        {
            // The lost flush held the "b" writes (keys 50-99) and deletes 30-34: what survives is
            // the state before it, whose WAL was deleted — the writes only that table held are gone.
            Assert.Equal(f.States[1], DbTestUtil.ReadAll(db));
        }
        Assert.False(f.Fs.FileExists(path));
        Assert.True(f.Fs.FileExists(Path.Combine(DbTestUtil.DbPath, "lost", newest)));
    }

    [Theory]
    [InlineData(0)]
    [InlineData(3)]
    [InlineData(20)]
    public void ManifestWithoutOneCompleteRecordIsCorrupt(int length)
    {
        Fixture f = Fixture.Build();
        f.Fs.WriteAllBytes(f.Manifest, f.Snapshot.Bytes(f.ManifestName).AsSpan(0, length));
        Assert.Throws<KvCorruptionException>(() => f.Open().Dispose());
    }

    /// <summary>Every byte of the MANIFEST, one bit flipped at a time.</summary>
    [Fact]
    public void EveryBitFlipIsCorruptionOrATornTailState()
    {
        Fixture f = Fixture.Build();
        byte[] original = f.Snapshot.Bytes(f.ManifestName);
        int opened = 0;
        for (int offset = 0; offset < original.Length; offset++)
        {
            f.Snapshot.Restore(f.Fs);
            byte[] damaged = (byte[])original.Clone();
            damaged[offset] ^= (byte)(1 << (offset * 3 % 8));
            f.Fs.WriteAllBytes(f.Manifest, damaged);
            SortedDictionary<string, string> content;
            try
            {
                using KvDb db = f.Open();
                content = DbTestUtil.ReadAll(db);
            }
            catch (KvCorruptionException)
            {
                continue;
            }
            // A flip may end the log early (a length past the end, a recyclable type) without
            // the reader noticing; then either the lost records were only bookkeeping (the final
            // WAL deletion) or a tracked WAL is missing and the open was refused above. So an open
            // that succeeds always shows the latest state, never an older one.
            Assert.True(f.States[2].SequenceEqual(content), $"a flip at {offset} opened an older state");
            opened++;
        }
        Assert.True(opened <= 3, $"{opened} flips opened: at most the length and type bytes of the last record may");
    }

    [Theory]
    [InlineData("")]
    [InlineData("\n")]
    [InlineData("garbage")]
    [InlineData("garbage\n")]
    [InlineData("MANIFEST-000999\n")]
    [InlineData("MANIFEST-\n")]
    [InlineData("MANIFEST-00000x\n")]
    [InlineData("000005.sst\n")]
    [InlineData("../MANIFEST-000001\n")]
    [InlineData("MANIFEST-000001 \n")]
    public void GarbageCurrentIsCorrupt(string content)
    {
        Fixture f = Fixture.Build();
        f.Fs.WriteAllBytes(Path.Combine(DbTestUtil.DbPath, "CURRENT"), Encoding.ASCII.GetBytes(content));
        Assert.Throws<KvCorruptionException>(() => f.Open().Dispose());
    }

    [Fact]
    public void BinaryCurrentIsCorrupt()
    {
        Fixture f = Fixture.Build();
        f.Fs.WriteAllBytes(Path.Combine(DbTestUtil.DbPath, "CURRENT"), new byte[] { 0xFF, 0x00, 0x4D, 0x0A });
        Assert.Throws<KvCorruptionException>(() => f.Open().Dispose());
    }

    [Fact]
    public void CurrentNamingAMissingManifestIsCorrupt()
    {
        Fixture f = Fixture.Build();
        f.Fs.DeleteFile(f.Manifest);
        Assert.Throws<KvCorruptionException>(() => f.Open().Dispose());
    }

    [Fact]
    public void MissingCurrentWithoutCreateIfMissingIsRefused()
    {
        Fixture f = Fixture.Build();
        f.Fs.DeleteFile(Path.Combine(DbTestUtil.DbPath, "CURRENT"));
        KvOptions o = f.Options();
        o.CreateIfMissing = false;
        Assert.Throws<KvException>(() => KvDb.Open(DbTestUtil.DbPath, o).Dispose());
    }

    /// <summary>
    /// Three states: after the first open (its WAL replayed into a table at the next open: the
    /// MANIFEST's first record), after a Flush of more writes (second record), after another
    /// (third record).
    /// </summary>
    private sealed class Fixture
    {
        public required FaultInjectionFileSystem Fs { get; init; }

        public required string ManifestName { get; init; }

        public string Manifest => Path.Combine(DbTestUtil.DbPath, ManifestName);

        public required long[] Starts { get; init; }

        public required long Size { get; init; }

        /// <summary>Where the MANIFEST's first record (the snapshot) ends.</summary>
        public required long FirstRecordEnd { get; init; }

        public required SortedDictionary<string, string>[] States { get; init; }

        public required FsSnapshot Snapshot { get; init; }

        public KvOptions Options() => new() { FileSystem = Fs, WriteBufferSize = 1 << 20 };

        public KvDb Open() => KvDb.Open(DbTestUtil.DbPath, Options());

        public static Fixture Build()
        {
            FaultInjectionFileSystem fs = DbTestUtil.NewFs();
            var o = new KvOptions { FileSystem = fs, WriteBufferSize = 1 << 20 };
            var model = new SortedDictionary<string, string>(StringComparer.Ordinal);
            var states = new SortedDictionary<string, string>[3];
            using (KvDb db = KvDb.Open(DbTestUtil.DbPath, o))
            {
                Write(db, model, 0, 50, "x", deleteFrom: 0, deleteTo: 0);
            }
            states[0] = new SortedDictionary<string, string>(model, StringComparer.Ordinal);
            var starts = new long[3];
            long size;
            string manifestName;
            using (KvDb db = KvDb.Open(DbTestUtil.DbPath, o))
            {
                manifestName = Path.GetFileName(DbTestUtil.CurrentManifest(fs, DbTestUtil.DbPath));
                string manifest = Path.Combine(DbTestUtil.DbPath, manifestName);
                starts[1] = fs.GetFileSize(manifest);
                Write(db, model, 25, 75, "a", deleteFrom: 0, deleteTo: 10);
                db.Flush();
                states[1] = new SortedDictionary<string, string>(model, StringComparer.Ordinal);
                starts[2] = fs.GetFileSize(manifest);
                Write(db, model, 50, 100, "b", deleteFrom: 30, deleteTo: 35);
                db.Flush();
                states[2] = new SortedDictionary<string, string>(model, StringComparer.Ordinal);
                size = fs.GetFileSize(manifest);
            }
            Assert.True(starts[1] > 0 && starts[2] > starts[1] && size > starts[2]);
            Assert.Equal(size, fs.ReadAllBytes(Path.Combine(DbTestUtil.DbPath, manifestName)).Length);
            return new Fixture
            {
                Fs = fs,
                ManifestName = manifestName,
                Starts = starts,
                FirstRecordEnd = FirstRecordLength(fs.ReadAllBytes(Path.Combine(DbTestUtil.DbPath, manifestName))),
                Size = size,
                States = states,
                Snapshot = FsSnapshot.Take(fs, DbTestUtil.DbPath),
            };
        }

        /// <summary>Header (checksum 4, length 2, type 1) plus payload of a log file's first record.</summary>
        private static long FirstRecordLength(byte[] manifest) => 7 + (manifest[4] | (manifest[5] << 8));

        private static void Write(KvDb db, SortedDictionary<string, string> model, int from, int to, string tag, int deleteFrom, int deleteTo)
        {
            for (int i = from; i < to; i++)
            {
                string k = $"m{i:D3}";
                string v = $"{tag}{i}-" + new string('v', i % 40);
                db.Put(DbTestUtil.B(k), DbTestUtil.B(v));
                model[k] = v;
            }
            for (int i = deleteFrom; i < deleteTo; i++)
            {
                string k = $"m{i:D3}";
                db.Delete(DbTestUtil.B(k));
                model.Remove(k);
            }
        }
    }
}
