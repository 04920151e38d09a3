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
