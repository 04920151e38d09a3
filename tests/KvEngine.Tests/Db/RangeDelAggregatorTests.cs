using System.Text;
using KvEngine.Db;
using KvEngine.Db.Read;
using KvEngine.Db.State;
using KvEngine.Storage;
using KvEngine.Versions;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Tests.Db;

/// <summary>
/// Which sources an iterator's range-deletion aggregator checks: a sorted level whose every table is
/// known (its reader opened) to hold no tombstone is left out, so a scan of a database without
/// range deletions does no per-key tombstone lookup; a level with a tombstone, or an unopened table,
/// stays in.
/// </summary>
public class RangeDelAggregatorTests
{
    private static KvDb Open(FaultInjectionFileSystem fs, string path) =>
        KvDb.Open(path, new KvOptions { FileSystem = fs, DisableAutoCompactions = true });

    private static void Fill(KvDb db, int from, int count)
    {
        for (int i = from; i < from + count; i++)
        {
            db.Put(Encoding.ASCII.GetBytes($"key{i:D6}"), Encoding.ASCII.GetBytes($"v{i}"));
        }
    }

    private static (Version Version, RangeDelAggregator? Aggregator) Aggregate(KvDb db)
    {
        ColumnFamilyData cfd = db.Impl.DefaultFamily;
        ReadState state = cfd.AcquireReadState();
        try
        {
            return (state.Version, RangeDelAggregator.Create(state, cfd.Tables, ulong.MaxValue >> 8));
        }
        finally
        {
            state.Unref();
        }
    }

    private static int DeepestLevel(Version v)
    {
        for (int level = Version.NumLevels - 1; level > 0; level--)
        {
            if (v.NumFiles(level) > 0)
            {
                return level;
            }
        }
        throw new InvalidOperationException("no sorted level holds a file");
    }

    [Fact]
    public void ALevelOfOpenedTablesWithoutTombstonesIsNotChecked()
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/a");
        using KvDb db = Open(fs, "/a/db");
        Fill(db, 0, 5_000);
        db.Flush();
        db.CompactRange(null, null);
        using (KvIterator it = db.NewIterator())
        {
            int n = 0;
            for (it.SeekToFirst(); it.Valid; it.Next())
            {
                n++;
            }
            Assert.Equal(5_000, n); // every table of the level opened
        }
        (Version v, RangeDelAggregator? agg) = Aggregate(db);
        Assert.True(v.LevelHasNoRangeTombstones(DeepestLevel(v)));
        Assert.Null(agg);
    }

    [Fact]
    public void ALevelWithATombstoneOrAnUnopenedTableIsChecked()
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/b");
        using (KvDb db = Open(fs, "/b/db"))
        {
            Fill(db, 0, 5_000);
            db.DeleteRange("key001000"u8, "key002000"u8);
            db.Flush();
            db.CompactRange(null, null);
            Assert.Null(db.Get("key001500"u8));
            Assert.NotNull(db.Get("key002500"u8));
            (Version v, RangeDelAggregator? agg) = Aggregate(db);
            int level = DeepestLevel(v);
            Assert.False(v.LevelHasNoRangeTombstones(level));
            Assert.NotNull(agg);
            Assert.True(agg!.ShouldDelete(InternalKey("key001500", 1)));
            Assert.False(agg.ShouldDelete(InternalKey("key002500", 1)));
        }

        // Reopened: a table nobody has read yet is not known to be free of tombstones.
        fs.CreateDirectory("/c");
        using (KvDb db = Open(fs, "/c/db"))
        {
            Fill(db, 0, 5_000);
            db.Flush();
            db.CompactRange(null, null);
        }
        using (KvDb db = Open(fs, "/c/db"))
        {
            Version v = db.Impl.DefaultFamily.Versions.Current;
            int level = DeepestLevel(v);
            bool allOpen = true;
            foreach (FileMetaData f in v.Files(level))
            {
                allOpen &= db.Impl.DefaultFamily.Tables.TryGetOpen(f, out _);
            }
            Assert.Equal(allOpen, v.LevelHasNoRangeTombstones(level));
            Assert.NotNull(db.Get("key000042"u8));
            using KvIterator it = db.NewIterator();
            for (it.SeekToFirst(); it.Valid; it.Next())
            {
            }
            Assert.True(v.LevelHasNoRangeTombstones(level));
        }
    }

    private static byte[] InternalKey(string userKey, ulong sequence)
    {
        byte[] key = new byte[userKey.Length + 8];
        Encoding.ASCII.GetBytes(userKey, key);
        ulong trailer = (sequence << 8) | 1; // a value
        BitConverter.TryWriteBytes(key.AsSpan(userKey.Length), trailer);
        return key;
    }
}
