using KvEngine.Storage;
using KvEngine.Versions;

using static KvEngine.Tests.Db.DbTestUtil;

namespace KvEngine.Tests.Db.Background;

/// <summary>
/// A flush whose memtables hold entries of which none survive (every Put met by its SingleDelete,
/// no snapshot between them, no range tombstone) writes no table, as RocksDB's BuildTable deletes
/// an empty output: the flush is recorded with its log number only. It used to record a table
/// without keys, which threw NullReferenceException on the background thread and killed the process
/// (found by the metamorphic test).
/// </summary>
public sealed class FlushEmptyOutputTests
{
    [Fact]
    public void AFlushWhereEveryEntryCancelsOutRecordsNoTable()
    {
        var fs = NewFs();
        KvOptions options = SmallOptions(fs, writeBufferSize: 8 << 20);
        options.DisableAutoCompactions = true;
        using (KvDb db = KvDb.Open(DbPath, options))
        {
            for (int i = 0; i < 100; i++)
            {
                db.Put([(byte)'k', (byte)i], "v"u8);
            }
            for (int i = 0; i < 100; i++)
            {
                db.SingleDelete([(byte)'k', (byte)i]);
            }
            db.Flush();
            Assert.Empty(db.Impl.Versions.Current.Files(0));
            Assert.Null(db.Get([(byte)'k', 7]));
            Assert.DoesNotContain(fs.GetChildren(DbPath), n => n.EndsWith(".sst", StringComparison.Ordinal));
            db.Put("after"u8, "1"u8);
            db.Flush();
            Assert.Single(db.Impl.Versions.Current.Files(0));
        }
        using KvDb reopened = KvDb.Open(DbPath, options);
        Assert.Null(reopened.Get([(byte)'k', 7]));
        Assert.Equal("1"u8.ToArray(), reopened.Get("after"u8));
    }
}
