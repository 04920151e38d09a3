using KvEngine.Filters;
using KvEngine.Storage;
using KvEngine.Table;
using KvEngine.Versions;

using static KvEngine.Tests.Db.DbTestUtil;

namespace KvEngine.Tests.Db.Background;

/// <summary>
/// A flush sizes its table's filter by the memtable's user-key count (FlushJob, MemTable.DistinctUserKeys)
/// rather than keeping a hash per key: the filter is the one for the keys the table holds, as
/// RocksDB's, however often they were overwritten.
/// </summary>
public sealed class FlushFilterSizingTests
{
    private static TableReader NewestLevel0Table(FaultInjectionFileSystem fs, KvDb db)
    {
        FileMetaData f = db.Impl.Versions.Current.Files(0)[0];
        string path = FileNames.TableFile(db.Path, f.Number);
        return TableReader.Open(fs.OpenRandomAccess(path), (long)f.FileSize, new TableOptions { FilterPolicy = new FastLocalBloomPolicy(10) }, path);
    }

    private static KvDb OpenDb(FaultInjectionFileSystem fs)
    {
        KvOptions options = SmallOptions(fs, writeBufferSize: 8 << 20);
        options.DisableAutoCompactions = true;
        return KvDb.Open(DbPath, options);
    }

    [Fact]
    public void TheFilterIsSizedBeforeTheFlushKnowsWhichKeysItDrops()
    {
        // A Put met by its SingleDelete goes at the flush with it, after the filter was sized by
        // the memtable's count: the filter is the one for every user key the memtable held (only
        // presizing gives that; a filter built from the hashes would be sized for the survivors).
        var fs = NewFs();
        using KvDb db = OpenDb(fs);
        const int Kept = 5000;
        const int Dropped = 1000;
        for (int k = 0; k < Kept + Dropped; k++)
        {
            db.Put(B($"key{k:D6}"), B("v"));
        }
        for (int k = Kept; k < Kept + Dropped; k++)
        {
            var batch = new WriteBatch();
            batch.SingleDelete(B($"key{k:D6}"));
            db.Write(batch);
        }
        db.Flush();

        using TableReader reader = NewestLevel0Table(fs, db);
        Assert.Equal((ulong)Kept, reader.Properties.NumFilterEntries);
        Assert.Equal((ulong)FastLocalBloomMath.CalculateSpace(Kept + Dropped, 10_000), reader.Properties.FilterSize);
        for (int k = 0; k < Kept; k++)
        {
            Assert.True(reader.KeyMayMatch(B($"key{k:D6}")));
        }
    }

    [Fact]
    public void WithRangeTombstonesTheFilterIsSizedForTheKeysThatStay()
    {
        // A DeleteRange may drop most of a memtable: such a flush collects hashes and sizes the
        // filter for what it writes.
        var fs = NewFs();
        using KvDb db = OpenDb(fs);
        for (int k = 0; k < 10_000; k++)
        {
            db.Put(B($"key{k:D6}"), B("v"));
        }
        db.DeleteRange(B("key000000"), B("key009000"));
        db.Flush();

        using TableReader reader = NewestLevel0Table(fs, db);
        Assert.Equal(1000UL, reader.Properties.NumFilterEntries);
        Assert.Equal((ulong)FastLocalBloomMath.CalculateSpace(1000, 10_000), reader.Properties.FilterSize);
    }

    [Fact]
    public void AFlushedTablesFilterIsSizedForItsDistinctKeys()
    {
        var fs = NewFs();
        KvOptions options = SmallOptions(fs, writeBufferSize: 8 << 20);
        options.DisableAutoCompactions = true;
        using KvDb db = KvDb.Open(DbPath, options);
        const int Keys = 20_000;
        var rng = new Random(3);
        for (int i = 0; i < 60_000; i++)
        {
            int k = i < Keys ? i : rng.Next(Keys); // every key once, then random overwrites
            db.Put(B($"key{k:D6}"), B($"value{i}"));
            if (i % 1000 == 999)
            {
                db.Delete(B($"key{rng.Next(Keys):D6}"));
            }
        }
        db.Flush();

        FileMetaData f = db.Impl.Versions.Current.Files(0)[0];
        string path = FileNames.TableFile(db.Path, f.Number);
        using TableReader reader = TableReader.Open(fs.OpenRandomAccess(path), (long)f.FileSize, new TableOptions { FilterPolicy = new FastLocalBloomPolicy(10) }, path);
        Assert.Equal((ulong)Keys, reader.Properties.NumFilterEntries);
        Assert.Equal((ulong)FastLocalBloomMath.CalculateSpace(Keys, 10_000), reader.Properties.FilterSize);
        for (int k = 0; k < Keys; k++)
        {
            Assert.True(reader.KeyMayMatch(B($"key{k:D6}")), $"key{k:D6}");
        }
    }
}
