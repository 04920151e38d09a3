using System.Security.Cryptography;
using System.Text;
using KvEngine.Storage;

namespace KvEngine.Tests.Db.Recovery;

/// <summary>
/// A MANIFEST that lost records (truncated, zeroed, a record length damaged so the rest reads as
/// the end of the file) never opens an older state and never has files deleted on its word: the
/// tables made after its last surviving record are numbered at or above the next file number it
/// records, so the open is refused with <see cref="KvCorruptionException"/> naming them and the
/// directory is left exactly as it was, or best-efforts recovery adopts them. A column family the
/// lost records created is damage, not a missing family. And a full disk's torn WAL tail does not
/// stop a reopen that cannot write tables yet.
/// </summary>
public sealed class ManifestGuardTests
{
    private const string Cf = "cf1";

    public static TheoryData<string> Damages() => new() { "truncate", "zero", "length" };

    /// <summary>
    /// The MANIFEST cut back to its first record (the snapshot of the open that started it): the
    /// tables the later records added are numbered past it, so the open is refused, nothing is
    /// deleted, and best-efforts recovery gets every key back.
    /// </summary>
    [Theory]
    [MemberData(nameof(Damages))]
    public void ManifestCutBackToItsFirstRecordIsRefusedAndDeletesNothing(string damage)
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        var o = new KvOptions { FileSystem = fs, WriteBufferSize = 1 << 20, DisableAutoCompactions = true };
        var model = new SortedDictionary<string, string>(StringComparer.Ordinal);
        using (KvDb db = KvDb.Open(DbTestUtil.DbPath, o))
        {
            Write(db, null, model, "s1", 0, 20);
            db.Flush();
        }
        using (KvDb db = KvDb.Open(DbTestUtil.DbPath, o))
        {
            for (int round = 0; round < 4; round++)
            {
                Write(db, null, model, $"r{round}", round * 30, round * 30 + 60);
                db.Delete(DbTestUtil.B($"k{round * 7:D4}"));
                model.Remove($"k{round * 7:D4}");
                db.Flush();
            }
            Write(db, null, model, "wal", 200, 210); // only in the WAL
        }
        string manifest = DbTestUtil.CurrentManifest(fs, DbTestUtil.DbPath);
        byte[] bytes = fs.ReadAllBytes(manifest);
        Damage(fs, manifest, bytes, RecordEnds(bytes)[0], damage);
        SortedDictionary<string, string> before = Listing(fs);

        KvCorruptionException e = Assert.Throws<KvCorruptionException>(() => KvDb.Open(DbTestUtil.DbPath, o).Dispose());
        Assert.Contains("lost edits", e.Message, StringComparison.Ordinal);
        Assert.Contains(".sst", e.Message, StringComparison.Ordinal);
        Assert.Contains("BestEffortsRecovery", e.Message, StringComparison.Ordinal);
        Assert.Equal(before, Listing(fs));

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

    /// <summary>
    /// A family created after the MANIFEST's first record, then the MANIFEST cut back to that
    /// record: naming the family is refused as corruption (not "no column family"), with
    /// CreateMissingColumnFamilies too (not an empty family with its tables deleted), and with
    /// best-efforts recovery (which cannot rebuild a family); the directory is left as it was.
    /// </summary>
    [Fact]
    public void FamilyTheManifestForgotIsDamageNotAMissingFamily()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        var o = new KvOptions { FileSystem = fs, WriteBufferSize = 1 << 20, DisableAutoCompactions = true };
        var model = new SortedDictionary<string, string>(StringComparer.Ordinal);
        var cfModel = new SortedDictionary<string, string>(StringComparer.Ordinal);
        using (KvDb db = KvDb.Open(DbTestUtil.DbPath, o))
        {
            Write(db, null, model, "d", 0, 20);
            db.Flush();
        }
        using (KvDb db = KvDb.Open(DbTestUtil.DbPath, o))
        {
            ColumnFamilyHandle cf = db.CreateColumnFamily(Cf);
            Write(db, cf, cfModel, "c", 0, 50);
            db.Flush(cf);
            Write(db, cf, cfModel, "c2", 25, 75);
            db.Flush(cf);
        }
        string manifest = DbTestUtil.CurrentManifest(fs, DbTestUtil.DbPath);
        byte[] bytes = fs.ReadAllBytes(manifest);
        fs.WriteAllBytes(manifest, bytes.AsSpan(0, (int)RecordEnds(bytes)[0]));
        SortedDictionary<string, string> before = Listing(fs);

        foreach ((bool createMissing, bool bestEfforts) in new[] { (false, false), (true, false), (false, true), (true, true) })
        {
            KvOptions oo = o.Clone();
            oo.CreateMissingColumnFamilies = createMissing;
            oo.BestEffortsRecovery = bestEfforts;
            KvCorruptionException e = Assert.Throws<KvCorruptionException>(() => KvDb.Open(DbTestUtil.DbPath, oo, Families()).Dispose());
            Assert.Contains("lost edits", e.Message, StringComparison.Ordinal);
            Assert.Equal(before, Listing(fs));
        }
    }

    /// <summary>
    /// A database with two column families, several flushes in each, a compaction and a dropped
    /// family: its MANIFEST cut at every record boundary (truncated, zeroed after, or the next
    /// record's length damaged so the rest reads as the end of the file) and opened plainly, with
    /// best-efforts recovery and with CreateMissingColumnFamilies. Every open either shows the
    /// latest state of both families or is refused with <see cref="KvCorruptionException"/>,
    /// leaving every file as it was.
    /// </summary>
    [Theory]
    [MemberData(nameof(Damages))]
    public void ManifestCutAtEveryRecordIsRefusedOrFullyRecovered(string damage)
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        var o = new KvOptions { FileSystem = fs, WriteBufferSize = 1 << 20, DisableAutoCompactions = true };
        var model = new SortedDictionary<string, string>(StringComparer.Ordinal);
        var cfModel = new SortedDictionary<string, string>(StringComparer.Ordinal);
        using (KvDb db = KvDb.Open(DbTestUtil.DbPath, o))
        {
            Write(db, null, model, "s1", 0, 30);
            db.Flush();
        }
        using (KvDb db = KvDb.Open(DbTestUtil.DbPath, o))
        {
            ColumnFamilyHandle cf = db.CreateColumnFamily(Cf);
            for (int round = 0; round < 3; round++)
            {
                Write(db, null, model, $"d{round}", round * 20, round * 20 + 40);
                Write(db, cf, cfModel, $"c{round}", round * 15, round * 15 + 30);
                db.Delete(DbTestUtil.B($"k{round * 3:D4}"));
                model.Remove($"k{round * 3:D4}");
                db.Flush();
                db.Flush(cf);
            }
            db.CompactRange(null, null);
            ColumnFamilyHandle gone = db.CreateColumnFamily("gone");
            db.Put(gone, "g"u8, "1"u8);
            db.Flush(gone);
            db.DropColumnFamily(gone);
            Write(db, null, model, "wal", 100, 110);
            Write(db, cf, cfModel, "wal", 100, 105);
        }
        FsSnapshot built = FsSnapshot.Take(fs, DbTestUtil.DbPath);
        string manifest = DbTestUtil.CurrentManifest(fs, DbTestUtil.DbPath);
        byte[] bytes = fs.ReadAllBytes(manifest);
        List<long> ends = RecordEnds(bytes);
        Assert.True(ends.Count > 15, $"only {ends.Count} records");

        int refused = 0;
        int opened = 0;
        foreach (long end in ends)
        {
            if (end == bytes.Length && damage != "truncate")
            {
                continue; // nothing follows the last record to zero or damage
            }
            foreach ((bool createMissing, bool bestEfforts) in new[] { (false, false), (true, false), (false, true) })
            {
                built.Restore(fs);
                Damage(fs, manifest, bytes, end, damage);
                SortedDictionary<string, string> before = Listing(fs);
                KvOptions oo = o.Clone();
                oo.CreateMissingColumnFamilies = createMissing;
                oo.BestEffortsRecovery = bestEfforts;
                KvDb db;
                try
                {
                    db = KvDb.Open(DbTestUtil.DbPath, oo, Families());
                }
                catch (KvCorruptionException)
                {
                    Assert.True(before.SequenceEqual(Listing(fs)), $"cut at {end} of {bytes.Length} ({damage}, createMissing {createMissing}, bestEfforts {bestEfforts}): a refused open changed the files");
                    refused++;
                    continue;
                }
                using (db)
                {
                    string where = $"cut at {end} of {bytes.Length} ({damage}, createMissing {createMissing}, bestEfforts {bestEfforts})";
                    Assert.True(model.SequenceEqual(DbTestUtil.ReadAll(db)), $"{where}: the default family is not at its latest state");
                    Assert.True(cfModel.SequenceEqual(ReadAll(db, db.GetColumnFamily(Cf)!)), $"{where}: {Cf} is not at its latest state");
                }
                opened++;
            }
        }
        // Every lost record is noticed here (the last ones are a WAL's and the close's); the
        // undamaged MANIFEST (cut at its end) opens.
        Assert.True(refused > 0, "no cut was refused");
        Assert.Equal(damage == "truncate" ? 3 : 0, opened);
    }

    /// <summary>
    /// A WAL append cut short by a full disk leaves a torn record at the WAL's end (never
    /// acknowledged). Reopened while tables still cannot be written, recovery keeps the data in
    /// memory and its WAL; the torn tail is not damage that could hide later writes: it is dropped,
    /// the open succeeds with every acknowledged write, and writes made then survive the next open.
    /// </summary>
    [Fact]
    public void TornWalTailOfAFullDiskDoesNotStopAReopenThatCannotWriteTables()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        var o = new KvOptions { FileSystem = fs, WriteBufferSize = 4 << 20 };
        KvDb db = KvDb.Open(DbTestUtil.DbPath, o);
        int acknowledged = 0;
        for (int i = 0; i < 20; i++)
        {
            db.Put(Key(i), Value(i));
            acknowledged = i + 1;
        }
        int appends = 0;
        fs.InjectedHResult = StorageErrors.ENoSpc;
        // The first append of the next write reaches the WAL (the record's start), the second fails.
        fs.ShouldFail = (op, path) => op == FileOperation.Append && path.EndsWith(".log", StringComparison.Ordinal) && ++appends > 1;
        KvException full = Assert.Throws<KvException>(() => db.Put(Key(20), Value(20)));
        Assert.Equal(KvStatusSubCode.NoSpace, full.SubCode);
        db.Dispose();

        // Space for the WAL, none yet for tables.
        fs.ShouldFail = (op, path) => op == FileOperation.Create && path.EndsWith(".sst", StringComparison.Ordinal);
        using (KvDb reopened = KvDb.Open(DbTestUtil.DbPath, o))
        {
            for (int i = 0; i < acknowledged; i++)
            {
                Assert.Equal(Value(i), reopened.Get(Key(i)));
            }
            reopened.Put(Key(100), Value(100), new WriteOptions { Sync = true });
        }
        fs.ShouldFail = null;
        using (KvDb reopened = KvDb.Open(DbTestUtil.DbPath, o))
        {
            for (int i = 0; i < acknowledged; i++)
            {
                Assert.Equal(Value(i), reopened.Get(Key(i)));
            }
            Assert.Equal(Value(100), reopened.Get(Key(100)));
        }
    }

    private static byte[] Key(int i) => Encoding.ASCII.GetBytes($"key{i:D5}");

    private static byte[] Value(int i) => Encoding.ASCII.GetBytes($"value{i:D5}-{new string('v', 40)}");

    private static List<ColumnFamilyDescriptor> Families() => [new("default"), new(Cf)];

    private static void Write(KvDb db, ColumnFamilyHandle? cf, SortedDictionary<string, string> model, string tag, int from, int to)
    {
        for (int i = from; i < to; i++)
        {
            string k = $"k{i:D4}";
            string v = $"{tag}-{i}-" + new string('v', i % 50);
            if (cf == null)
            {
                db.Put(DbTestUtil.B(k), DbTestUtil.B(v));
            }
            else
            {
                db.Put(cf, DbTestUtil.B(k), DbTestUtil.B(v));
            }
            model[k] = v;
        }
    }

    private static SortedDictionary<string, string> ReadAll(KvDb db, ColumnFamilyHandle cf)
    {
        var result = new SortedDictionary<string, string>(StringComparer.Ordinal);
        using KvIterator it = db.NewIterator(cf);
        for (it.SeekToFirst(); it.Valid; it.Next())
        {
            result.Add(DbTestUtil.S(it.Key), DbTestUtil.S(it.Value));
        }
        return result;
    }

    /// <summary>Where each record of a MANIFEST (one block: physical records are whole records) ends.</summary>
    private static List<long> RecordEnds(byte[] manifest)
    {
        Assert.True(manifest.Length < 32 << 10, "the MANIFEST spans several blocks");
        var ends = new List<long>();
        for (long offset = 0; offset + 7 <= manifest.Length;)
        {
            int length = manifest[offset + 4] | (manifest[offset + 5] << 8);
            Assert.Equal(1, manifest[offset + 6]); // a full record
            offset += 7 + length;
            ends.Add(offset);
        }
        Assert.Equal(manifest.Length, ends[^1]);
        return ends;
    }

    /// <summary>
    /// Loses the MANIFEST's records after <paramref name="end"/>: cut there, zeros from there on,
    /// or the next record's length enlarged past the end of the file.
    /// </summary>
    private static void Damage(FaultInjectionFileSystem fs, string manifest, byte[] bytes, long end, string damage)
    {
        byte[] damaged = (byte[])bytes.Clone();
        switch (damage)
        {
            case "truncate":
                damaged = bytes.AsSpan(0, (int)end).ToArray();
                break;
            case "zero":
                Array.Clear(damaged, (int)end, damaged.Length - (int)end);
                break;
            default:
                damaged[end + 4] = 0xFF;
                damaged[end + 5] = 0x7F;
                break;
        }
        fs.WriteAllBytes(manifest, damaged);
    }

    /// <summary>Every file of the database directory (name, then a hash of its bytes).</summary>
    private static SortedDictionary<string, string> Listing(FaultInjectionFileSystem fs)
    {
        var result = new SortedDictionary<string, string>(StringComparer.Ordinal);
        foreach (string name in fs.GetChildren(DbTestUtil.DbPath))
        {
            string path = Path.Combine(DbTestUtil.DbPath, name);
            result[name] = fs.DirectoryExists(path) ? "directory" : Convert.ToHexString(SHA256.HashData(fs.ReadAllBytes(path)));
        }
        return result;
    }
}
