using KvEngine.Storage;

namespace KvEngine.Tests.Db;

/// <summary>
/// Damaged table files of a flushed database. With checksum verification (the default) every
/// read either throws <see cref="KvCorruptionException"/> or returns the right answer — never a
/// wrong value, never a present key reported absent. Without it, wrong values are possible, but
/// still only <see cref="KvCorruptionException"/> may be thrown (no IndexOutOfRange, no
/// NullReference, no hang). A missing table is found at open; a truncated one when ParanoidChecks
/// is on (RocksDB's CheckConsistency: the size of every live table), else at the first read of
/// that table. The open's error names the table as the damaged file, not the MANIFEST, and says
/// what best-efforts recovery would lose.
/// </summary>
public sealed class TableCorruptionTests
{
    private const int Keys = 300;

    [Fact]
    public void BitFlipsWithChecksumsGiveCorruptionOrTheRightValue()
    {
        RunFlips(verifyChecksums: true, seed: 1);
    }

    [Fact]
    public void BitFlipsWithoutChecksumsThrowOnlyCorruption()
    {
        RunFlips(verifyChecksums: false, seed: 2);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void MissingTable(bool paranoid)
    {
        Fixture f = Fixture.Build();
        string table = f.Tables[0];
        f.Fs.DeleteFile(Path.Combine(DbTestUtil.DbPath, table));
        CheckDamagedTable(f, table, refusedAtOpen: true, paranoid);
    }

    [Theory]
    [InlineData(true, 0)]
    [InlineData(true, 10)]
    [InlineData(true, -1)]
    [InlineData(false, 0)]
    [InlineData(false, 10)]
    [InlineData(false, -1)]
    [InlineData(false, -2)]
    public void TruncatedTable(bool paranoid, int length)
    {
        Fixture f = Fixture.Build();
        string table = f.Tables[^1];
        string path = Path.Combine(DbTestUtil.DbPath, table);
        byte[] bytes = f.Fs.ReadAllBytes(path);
        int keep = length switch
        {
            -1 => bytes.Length - 1,
            -2 => bytes.Length / 2,
            _ => length,
        };
        f.Fs.WriteAllBytes(path, bytes.AsSpan(0, keep));
        CheckDamagedTable(f, table, refusedAtOpen: paranoid, paranoid);
    }

    private static void CheckDamagedTable(Fixture f, string table, bool refusedAtOpen, bool paranoid)
    {
        var o = new KvOptions { FileSystem = f.Fs, ParanoidChecks = paranoid, DisableAutoCompactions = true };
        if (refusedAtOpen)
        {
            KvCorruptionException e = Assert.Throws<KvCorruptionException>(() => KvDb.Open(DbTestUtil.DbPath, o).Dispose());
            Assert.Contains(table, e.Message, StringComparison.Ordinal);
            // The table is the damaged file: the MANIFEST is not blamed, and best-efforts recovery
            // is not offered as if it kept the table's keys.
            Assert.DoesNotContain("lost edits", e.Message, StringComparison.Ordinal);
            Assert.Contains("table file is damaged", e.Message, StringComparison.Ordinal);
            Assert.Contains("keys only it held would be gone", e.Message, StringComparison.Ordinal);
            return;
        }
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, o);
        Assert.Throws<KvCorruptionException>(() => DbTestUtil.ReadAll(db));
        int failed = 0;
        foreach (KeyValuePair<string, string> e in f.Model)
        {
            try
            {
                byte[]? v = db.Get(DbTestUtil.B(e.Key));
                Assert.True(v != null && DbTestUtil.S(v) == e.Value, $"{e.Key}: wrong answer with {table} damaged");
            }
            catch (KvCorruptionException)
            {
                failed++;
            }
        }
        Assert.True(failed > 0, "no read noticed the damaged table");
    }

    private static void RunFlips(bool verifyChecksums, int seed)
    {
        Fixture f = Fixture.Build();
        var rng = new Random(seed);
        var ro = new ReadOptions { VerifyChecksums = verifyChecksums };
        int detected = 0;
        int attempts = 0;
        foreach (string table in f.Tables)
        {
            string path = Path.Combine(DbTestUtil.DbPath, table);
            byte[] original = f.Fs.ReadAllBytes(path);
            // The footer (53 bytes in format_version 5) byte by byte, the rest sampled.
            var offsets = new SortedSet<int>();
            for (int i = Math.Max(0, original.Length - 53); i < original.Length; i++)
            {
                offsets.Add(i);
            }
            for (int i = 0; i < 30; i++)
            {
                offsets.Add(rng.Next(original.Length));
            }
            foreach (int offset in offsets)
            {
                byte[] damaged = (byte[])original.Clone();
                damaged[offset] ^= (byte)(1 << rng.Next(8));
                f.Fs.WriteAllBytes(path, damaged);
                attempts++;
                Task<bool> run = Task.Run(() => ReadEverything(f, ro, verifyChecksums, $"{table} byte {offset}"));
                Assert.True(run.Wait(TimeSpan.FromSeconds(20)), $"reads hung with {table} byte {offset} flipped");
                detected += run.Result ? 1 : 0;
            }
            f.Fs.WriteAllBytes(path, original);
        }
        Assert.True(detected > attempts / 2, $"only {detected} of {attempts} flips were noticed");
    }

    /// <summary>Every Get (present and absent keys) and a full scan; true when corruption was reported.</summary>
    private static bool ReadEverything(Fixture f, ReadOptions ro, bool strict, string context)
    {
        bool corrupt = false;
        // No compaction: it would read (and replace) the damaged tables in the background.
        KvDb db;
        try
        {
            db = KvDb.Open(DbTestUtil.DbPath, new KvOptions { FileSystem = f.Fs, DisableAutoCompactions = true });
        }
        catch (KvCorruptionException)
        {
            return true; // the open loads every table's reader (max_open_files -1) and found the damage
        }
        using KvDb opened = db;
        for (int i = 0; i < Keys + 20; i += 5)
        {
            string key = Fixture.Key(i);
            try
            {
                byte[]? v = db.Get(DbTestUtil.B(key), ro);
                if (strict)
                {
                    f.Model.TryGetValue(key, out string? expected);
                    Assert.True(expected == (v == null ? null : DbTestUtil.S(v)), $"{context}: wrong answer for {key}");
                }
            }
            catch (KvCorruptionException)
            {
                corrupt = true;
            }
        }
        try
        {
            SortedDictionary<string, string> all = DbTestUtil.ReadAll(db, ro);
            if (strict)
            {
                Assert.True(f.Model.Count == all.Count && f.Model.All(e => all.TryGetValue(e.Key, out string? v) && v == e.Value),
                    $"{context}: the scan returned wrong contents");
            }
        }
        catch (KvCorruptionException)
        {
            corrupt = true;
        }
        return corrupt;
    }

    /// <summary>A database whose contents are all in tables (several level-0 files), closed.</summary>
    private sealed class Fixture
    {
        public required FaultInjectionFileSystem Fs { get; init; }

        public required SortedDictionary<string, string> Model { get; init; }

        public required List<string> Tables { get; init; }

        public static string Key(int i) => $"t{i:D5}";

        public static Fixture Build()
        {
            FaultInjectionFileSystem fs = DbTestUtil.NewFs();
            var model = new SortedDictionary<string, string>(StringComparer.Ordinal);
            var rng = new Random(7);
            // Several level-0 tables (no compaction merging them) so each can be damaged on its own.
            using (KvDb db = KvDb.Open(DbTestUtil.DbPath, new KvOptions { FileSystem = fs, WriteBufferSize = 16 << 10, BlockSize = 1024, DisableAutoCompactions = true }))
            {
                for (int round = 0; round < 3; round++)
                {
                    for (int i = round; i < Keys; i += 1 + round)
                    {
                        string k = Key(i);
                        if (round == 2 && i % 7 == 0)
                        {
                            db.Delete(DbTestUtil.B(k));
                            model.Remove(k);
                            continue;
                        }
                        string v = $"r{round}-{i}-" + new string((char)('a' + rng.Next(26)), rng.Next(0, 200));
                        db.Put(DbTestUtil.B(k), DbTestUtil.B(v));
                        model[k] = v;
                    }
                    db.Flush();
                }
            }
            List<string> tables = DbTestUtil.ListFiles(fs, DbTestUtil.DbPath).Tables;
            Assert.True(tables.Count >= 3, "the fixture should have several tables");
            return new Fixture { Fs = fs, Model = model, Tables = tables };
        }
    }
}
