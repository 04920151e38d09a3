using KvEngine.Storage;
using KvEngine.Versions;
using static KvEngine.Tests.Db.DbTestUtil;

namespace KvEngine.Tests.Db;

/// <summary>
/// RocksDB 7.8's rules at the edges of column families: a list of families must name "default"
/// (read-write and read-only), and a dropped family's handle serves reads of its last state until
/// it is disposed, then its files go.
/// </summary>
public sealed class ColumnFamilySemanticsTests
{
    private static KvOptions Options(FaultInjectionFileSystem fs) => new()
    {
        FileSystem = fs,
        CreateMissingColumnFamilies = true,
        WriteBufferSize = 1 << 20,
    };

    [Fact]
    public void AListOfFamiliesWithoutDefaultIsRefused()
    {
        FaultInjectionFileSystem fs = NewFs();
        // A new database: refused before anything is created.
        ArgumentException e = Assert.Throws<ArgumentException>(() => KvDb.Open(DbPath, Options(fs), [new ColumnFamilyDescriptor("a")]));
        Assert.Contains("Default column family not specified", e.Message, StringComparison.Ordinal);
        Assert.False(fs.FileExists(FileNames.CurrentFile(DbPath)));

        using (KvDb db = KvDb.Open(DbPath, Options(fs), [new ColumnFamilyDescriptor("default", Options(fs)), new ColumnFamilyDescriptor("a")]))
        {
            db.Put(db.GetColumnFamily("a")!, B("k"), B("v"));
        }
        // An existing one, read-write and read-only (RocksDB's VersionSet::Recover refuses both).
        e = Assert.Throws<ArgumentException>(() => KvDb.Open(DbPath, Options(fs), [new ColumnFamilyDescriptor("a")]));
        Assert.Contains("Default column family not specified", e.Message, StringComparison.Ordinal);
        e = Assert.Throws<ArgumentException>(() => KvDb.OpenReadOnly(DbPath, Options(fs), [new ColumnFamilyDescriptor("a")]));
        Assert.Contains("Default column family not specified", e.Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentException>(() => KvDb.Open(DbPath, Options(fs), []));

        // Without a list, the default family alone is meant (RocksDB's DB::Open without families):
        // read-only may open it, read-write must still name "a".
        using (KvDb ro = KvDb.OpenReadOnly(DbPath, Options(fs)))
        {
            Assert.Single(ro.ColumnFamilies);
        }
        using KvDb again = KvDb.Open(DbPath, Options(fs), [new ColumnFamilyDescriptor("a"), new ColumnFamilyDescriptor("default", Options(fs))]);
        Assert.Equal("v", S(again.Get(again.GetColumnFamily("a")!, B("k"))));
    }

    [Fact]
    public void DroppedFamilyServesItsLastStateUntilTheHandleIsDisposed()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, Options(fs));
        ColumnFamilyHandle cf = db.CreateColumnFamily("cf", new ColumnFamilyOptions { WriteBufferSize = 1 << 20 });
        for (int i = 0; i < 100; i++)
        {
            db.Put(cf, B($"k{i:D3}"), B($"table-{i}"));
        }
        db.Flush(cf);
        for (int i = 50; i < 150; i++)
        {
            db.Put(cf, B($"k{i:D3}"), B($"mem-{i}")); // newer values in the memtable
        }
        db.Delete(cf, B("k000"));
        ulong table = Assert.Single(cf.Data.Versions.Current.Files(0)).Number;

        db.DropColumnFamily(cf);

        Assert.Null(db.Get(cf, B("k000")));
        Assert.Equal("table-1", S(db.Get(cf, B("k001"))));
        Assert.Equal("mem-120", S(db.Get(cf, B("k120"))));
        byte[]?[] values = db.MultiGet(cf, [B("k049"), B("k050"), B("k999")]);
        Assert.Equal(new string?[] { "table-49", "mem-50", null }, values.Select(v => v == null ? null : S(v)));
        Assert.True(db.KeyMayExist(cf, B("k149"), null, out _));
        using (KvIterator it = db.NewIterator(cf))
        {
            int n = 0;
            for (it.SeekToFirst(); it.Valid; it.Next())
            {
                n++;
            }
            Assert.Equal(149, n);
        }
        // Everything else through the handle is refused at once, as before.
        Assert.Throws<ArgumentException>(() => db.Put(cf, B("x"), B("y")));
        Assert.Throws<ArgumentException>(() => db.Flush(cf));
        Assert.Throws<ArgumentException>(() => db.GetProperty(cf, "rocksdb.stats"));
        // Other families' flushes sweep files: the dropped family's table stays while the handle serves reads.
        db.Put(B("d"), B("d"));
        db.Flush();
        Assert.True(fs.FileExists(FileNames.TableFile(DbPath, table)));

        KvIterator pinned = db.NewIterator(cf);
        cf.Dispose();
        cf.Dispose(); // idempotent
        Assert.Throws<ArgumentException>(() => db.Get(cf, B("k001")));
        Assert.Throws<ArgumentException>(() => db.NewIterator(cf));
        Assert.Throws<ArgumentException>(() => db.MultiGet(cf, [B("k001")]));
        pinned.SeekToFirst(); // an iterator taken before the dispose keeps its state
        Assert.Equal("k001", S(pinned.Key));
        Assert.True(fs.FileExists(FileNames.TableFile(DbPath, table)));
        pinned.Dispose();
        db.Put(B("e"), B("e"));
        db.Flush(); // a sweep: nothing reads the dropped family any more
        Assert.False(fs.FileExists(FileNames.TableFile(DbPath, table)));
    }

    [Fact]
    public void DisposingALiveHandleChangesNothing()
    {
        FaultInjectionFileSystem fs = NewFs();
        using KvDb db = KvDb.Open(DbPath, Options(fs));
        ColumnFamilyHandle cf = db.CreateColumnFamily("cf");
        cf.Dispose();
        db.DefaultColumnFamily.Dispose();
        db.Put(cf, B("k"), B("v"));
        Assert.Equal("v", S(db.Get(cf, B("k"))));
        Assert.Same(cf, db.GetColumnFamily("cf"));
        db.DropColumnFamily(cf);
        Assert.Equal("v", S(db.Get(cf, B("k")))); // a dispose before the drop does not end reads after it
        db.Dispose();
        cf.Dispose(); // after close: nothing to release
    }
}
