using System.Buffers.Binary;
using KvEngine.Storage;
using KvEngine.Versions;

using static KvEngine.Tests.Db.DbTestUtil;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Tests.Db.Recovery;

/// <summary>
/// KvDb.Repair (RocksDB's RepairDB) on databases whose MANIFEST and CURRENT are gone or damaged:
/// every acknowledged write of every family comes back (flushed and unflushed, range deletions,
/// merges counted once, single deletions); an unreadable table moves to lost/ and the rest is
/// recovered; an open database is refused.
/// </summary>
public sealed class RepairTests
{
    private static KvOptions Options(FaultInjectionFileSystem fs) => new()
    {
        FileSystem = fs,
        WriteBufferSize = 1 << 20,
        CreateMissingColumnFamilies = true,
    };

    private static ColumnFamilyDescriptor[] Families() =>
    [
        new("counters", new ColumnFamilyOptions { MergeOperator = UInt64AddOperator.Instance }),
        new("other"),
    ];

    private static byte[] U64(ulong v)
    {
        var b = new byte[8];
        BinaryPrimitives.WriteUInt64LittleEndian(b, v);
        return b;
    }

    private static SortedDictionary<string, string> ReadAll(KvDb db, ColumnFamilyHandle cf)
    {
        var result = new SortedDictionary<string, string>(StringComparer.Ordinal);
        using KvIterator it = db.NewIterator(cf);
        for (it.SeekToFirst(); it.Valid; it.Next())
        {
            result.Add(S(it.Key), Convert.ToHexString(it.Value));
        }
        return result;
    }

    private static Dictionary<string, SortedDictionary<string, string>> Snapshot(KvDb db)
    {
        var all = new Dictionary<string, SortedDictionary<string, string>>();
        foreach (ColumnFamilyHandle cf in db.ColumnFamilies)
        {
            all[cf.Name] = ReadAll(db, cf);
        }
        return all;
    }

    // Default and "other" hold plain data, "counters" merges; each family has tables and
    // unflushed writes, and "counters" was flushed while the WAL holding its operands lives on.
    private static Dictionary<string, SortedDictionary<string, string>> Populate(FaultInjectionFileSystem fs)
    {
        using KvDb db = KvDb.Open(DbPath, Options(fs), DbTestUtil.WithDefault(Options(fs), Families()));
        ColumnFamilyHandle counters = db.GetColumnFamily("counters")!;
        ColumnFamilyHandle other = db.GetColumnFamily("other")!;
        for (int i = 0; i < 200; i++)
        {
            db.Put(B($"d{i:D3}"), B($"v{i}"));
            db.Put(other, B($"o{i:D3}"), B($"w{i}"));
            db.Merge(counters, B($"c{i % 10}"), U64(1));
        }
        db.Flush();
        db.DeleteRange(B("d050"), B("d100"));
        db.SingleDelete(B("d150"));
        db.Delete(other, B("o007"));
        for (int i = 0; i < 10; i++)
        {
            db.Merge(counters, B($"c{i}"), U64(100));
        }
        db.Flush(counters); // its operands stay in the live WAL too, which must not count them twice
        for (int i = 0; i < 10; i++)
        {
            db.Merge(counters, B($"c{i}"), U64(1000));
        }
        db.Put(B("unflushed"), B("u"));
        db.Put(other, B("unflushed"), B("u"));
        db.DeleteRange(other, B("o100"), B("o110"));
        var expected = Snapshot(db);
        Assert.Equal(Convert.ToHexString(U64(1120)), expected["counters"]["c0"]);
        return expected;
    }

    private static void AssertRepaired(FaultInjectionFileSystem fs, Dictionary<string, SortedDictionary<string, string>> expected)
    {
        using KvDb db = KvDb.Open(DbPath, Options(fs), DbTestUtil.WithDefault(Options(fs), Families()));
        Dictionary<string, SortedDictionary<string, string>> actual = Snapshot(db);
        Assert.Equal(expected.Keys.Order(), actual.Keys.Order());
        foreach (string family in expected.Keys)
        {
            Assert.Equal(expected[family], actual[family]);
        }
        Assert.Null(db.Get(B("d150")));
        Assert.Equal(U64(1120), db.Get(db.GetColumnFamily("counters")!, B("c3")));
    }

    private static void DeleteManifests(FaultInjectionFileSystem fs)
    {
        foreach (string name in fs.GetChildren(DbPath))
        {
            if (name.StartsWith("MANIFEST-", StringComparison.Ordinal) || name == "CURRENT")
            {
                fs.DeleteFile(DbPath + "/" + name);
            }
        }
    }

    [Fact]
    public void LostManifestAndCurrent_EveryFamilyComesBack()
    {
        var fs = NewFs();
        var expected = Populate(fs);
        DeleteManifests(fs);
        Assert.ThrowsAny<KvException>(() => KvDb.Open(DbPath, new KvOptions { FileSystem = fs, CreateIfMissing = false }).Dispose());

        KvDb.Repair(DbPath, Options(fs), Families());

        AssertRepaired(fs, expected);
        using (KvDb db = KvDb.Open(DbPath, Options(fs), DbTestUtil.WithDefault(Options(fs), Families())))
        {
            db.Put(B("after"), B("repair")); // it takes writes and flushes
            db.Flush();
        }
        expected[ColumnFamilyVersions.DefaultName]["after"] = Convert.ToHexString(B("repair"));
        AssertRepaired(fs, expected);
    }

    [Fact]
    public void DamagedManifestMovesToLost()
    {
        var fs = NewFs();
        var expected = Populate(fs);
        string manifest = fs.GetChildren(DbPath).Single(n => n.StartsWith("MANIFEST-", StringComparison.Ordinal));
        byte[] bytes = fs.ReadAllBytes(DbPath + "/" + manifest);
        bytes.AsSpan(0, Math.Min(64, bytes.Length)).Fill(0xA5);
        fs.WriteAllBytes(DbPath + "/" + manifest, bytes);
        Assert.Throws<KvCorruptionException>(() => KvDb.Open(DbPath, Options(fs), DbTestUtil.WithDefault(Options(fs), Families())).Dispose());

        KvDb.Repair(DbPath, Options(fs), Families());

        Assert.Contains(manifest, fs.GetChildren(DbPath + "/lost"));
        AssertRepaired(fs, expected);
    }

    [Fact]
    public void AnUnreadableTableMovesToLostAndTheRestIsRecovered()
    {
        var fs = NewFs();
        using (KvDb db = KvDb.Open(DbPath, Options(fs)))
        {
            for (int i = 0; i < 100; i++)
            {
                db.Put(B($"a{i:D3}"), B(new string('a', 100)));
            }
            db.Flush();
            for (int i = 0; i < 100; i++)
            {
                db.Put(B($"b{i:D3}"), B(new string('b', 100)));
            }
            db.Flush();
            db.Put(B("c"), B("unflushed"));
        }
        List<string> tables = fs.GetChildren(DbPath).Where(n => n.EndsWith(".sst", StringComparison.Ordinal)).Order(StringComparer.Ordinal).ToList();
        Assert.Equal(2, tables.Count);
        string damaged = DbPath + "/" + tables[1]; // the b keys
        byte[] bytes = fs.ReadAllBytes(damaged);
        bytes[100] ^= 0xFF; // inside the first data block: its checksum fails
        fs.WriteAllBytes(damaged, bytes);
        DeleteManifests(fs);

        KvDb.Repair(DbPath, Options(fs));

        Assert.Contains(tables[1], fs.GetChildren(DbPath + "/lost"));
        using KvDb repaired = KvDb.Open(DbPath, Options(fs));
        SortedDictionary<string, string> all = DbTestUtil.ReadAll(repaired);
        Assert.Equal(101, all.Count);
        Assert.True(all.ContainsKey("a099"));
        Assert.False(all.ContainsKey("b000"));
        Assert.Equal("unflushed", all["c"]);
    }

    [Fact]
    public void RefusesAnOpenDatabase()
    {
        var fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, Options(fs));
        db.Put(B("k"), B("v"));
        IReadOnlyList<string> before = fs.GetChildren(DbPath);
        var e = Assert.Throws<KvLockHeldException>(() => KvDb.Repair(DbPath, Options(fs)));
        Assert.Contains("open", e.Message, StringComparison.Ordinal);
        Assert.Equal(before, fs.GetChildren(DbPath));
        KvException missing = Assert.Throws<KvException>(() => KvDb.Repair("/kvtest/missing", Options(fs)));
        Assert.Equal((KvStatusCode.IOError, KvStatusSubCode.PathNotFound), (missing.StatusCode, missing.SubCode));
    }

    [Fact]
    public void TheFreshManifestPlacesEveryTableInLevelZeroOfItsFamily()
    {
        var fs = NewFs();
        Populate(fs);
        var tables = new SortedSet<ulong>();
        foreach (string name in fs.GetChildren(DbPath))
        {
            if (FileNames.TryParse(name, out DbFileType type, out ulong number) && type == DbFileType.Table)
            {
                tables.Add(number);
            }
        }
        DeleteManifests(fs);

        List<KvEngine.Db.Recovery.Repairer.Family> families = KvEngine.Db.Recovery.Repairer.RebuildManifest(fs, DbPath, Families());

        RecoveredManifest m = ManifestReader.Read(fs, DbPath, bestEfforts: false, new WalTracker());
        Assert.Equal(new[] { "counters", "default", "other" }, m.Families.Values.Select(f => f.Name).Order(StringComparer.Ordinal));
        var named = new SortedSet<ulong>();
        foreach (RecoveredFamily rf in m.Families.Values)
        {
            Version v = rf.Builder.Build(null);
            for (int level = 1; level < Version.NumLevels; level++)
            {
                Assert.Empty(v.Files(level));
            }
            foreach (FileMetaData f in v.Files(0))
            {
                Assert.True(f.MarkedForCompaction);
                named.Add(f.Number);
            }
            Assert.NotEmpty(v.Files(0)); // every family was flushed at least once
        }
        Assert.Equal(tables, named);
        // "counters" was flushed after the first WAL began: its log number skips that WAL, the
        // default family (flushed before) starts at the same one as "other" (flushed with it).
        var byName = families.ToDictionary(f => f.Name);
        Assert.True(byName["counters"].LogNumber > byName["default"].LogNumber);
        Assert.Equal(byName["default"].LogNumber, byName["other"].LogNumber);
        Assert.True(m.LastSequence >= families.Max(f => f.FlushedSequence));
    }
}
