using KvEngine.Storage;
using static KvEngine.Tests.Db.DbTestUtil;

namespace KvEngine.Tests.Db.Recovery;

/// <summary>
/// Column families at the edges of recovery and dropping (found by review): a damaged WAL behind a
/// family's tables, the memory of a dropped family, listing a database that does not exist.
/// </summary>
public sealed class ColumnFamilyRecoveryTests
{
    private static KvOptions Options(FaultInjectionFileSystem fs, WalRecoveryMode mode = WalRecoveryMode.TolerateCorruptedTailRecords) =>
        new() { FileSystem = fs, CreateIfMissing = true, CreateMissingColumnFamilies = true, WalRecoveryMode = mode };

    private static KvDb OpenAB(FaultInjectionFileSystem fs, WalRecoveryMode mode = WalRecoveryMode.TolerateCorruptedTailRecords) =>
        KvDb.Open(DbPath, Options(fs, mode), [new ColumnFamilyDescriptor("default", Options(fs, mode)), new ColumnFamilyDescriptor("a"), new ColumnFamilyDescriptor("b")]);

    /// <summary>
    /// Batches wrote a and b; b was flushed past the first WAL, which is then damaged. Replaying up
    /// to the damage would keep b's half of a batch and lose a's: the open is refused, as RocksDB
    /// refuses "SST file is ahead of WALs".
    /// </summary>
    [Fact]
    public void PointInTimeRecoveryRefusesAFamilyWhoseTablesAreAheadOfADamagedWal()
    {
        FaultInjectionFileSystem fs = NewFs();
        KvDb db = OpenAB(fs);
        ColumnFamilyHandle a = db.GetColumnFamily("a")!;
        ColumnFamilyHandle b = db.GetColumnFamily("b")!;
        for (int i = 0; i < 2; i++)
        {
            using var batch = new WriteBatch();
            batch.Put(a, B($"k{i}"), B($"v{i}"));
            batch.Put(b, B($"k{i}"), B($"v{i}"));
            db.Write(batch, new WriteOptions { Sync = true });
            db.Flush(b);
        }
        Abandon(fs, db, powerLoss: false);
        string first = fs.GetChildren(DbPath).Where(n => n.EndsWith(".log", StringComparison.Ordinal)).OrderBy(n => n, StringComparer.Ordinal).First();
        string path = Path.Combine(DbPath, first);
        byte[] bytes = fs.ReadAllBytes(path);
        bytes[7 + 20] ^= 0x10;
        fs.WriteAllBytes(path, bytes);
        var e = Assert.Throws<KvCorruptionException>(() => OpenAB(fs, WalRecoveryMode.PointInTimeRecovery).Dispose());
        Assert.Contains("ahead of WALs", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void ADroppedFamilysMutableMemTableIsFreedOnceTheNextWriteRanAndTheHandleIsDisposed()
    {
        using KvDb db = KvDb.Open(DbPath, Options(NewFs()));
        ColumnFamilyHandle x = db.CreateColumnFamily("x");
        for (int i = 0; i < 10_000; i++)
        {
            db.Put(x, B($"key{i:D6}"), new byte[100]);
        }
        KvEngine.Memtable.MemTable mem = x.Data.Mem;
        db.DropColumnFamily(x);
        db.Put(B("next"), B("write")); // its leader releases the family's own reference on the memtable
        Assert.NotNull(db.Get(x, B("key000001"))); // the handle still serves reads: the read state holds it
        x.Dispose();
        Assert.Throws<ObjectDisposedException>(() => mem.Ref());
    }

    [Fact]
    public void ListingTheFamiliesOfAMissingDatabaseIsNotCorruption()
    {
        KvException e = Assert.Throws<KvException>(() => KvDb.ListColumnFamilies(DbPath, new KvOptions { FileSystem = NewFs() }));
        Assert.Contains("does not exist", e.Message, StringComparison.Ordinal);
    }
}
