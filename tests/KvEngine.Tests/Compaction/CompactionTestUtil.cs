using System.Text;
using KvEngine.Db;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Versions;
using KvEngine.Storage;
using KvEngine.Table;

using ValueType = KvEngine.Format.ValueType;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Tests.Compaction;

/// <summary>Helpers for compaction tests: tiny options, entry dumps of levels, synthetic files.</summary>
internal static class CompactionTestUtil
{
    /// <summary>Sizes so small that a few thousand writes make many compactions.</summary>
    public static KvOptions Tiny(IFileSystem fs, bool autoCompactions = true) => new()
    {
        FileSystem = fs,
        WriteBufferSize = 16 << 10,
        TargetFileSizeBase = 8 << 10,
        MaxBytesForLevelBase = 32 << 10,
        Level0FileNumCompactionTrigger = 2,
        DisableAutoCompactions = !autoCompactions,
        BlockSize = 1024,
    };

    public static byte[] K(string s) => Encoding.ASCII.GetBytes(s);

    /// <summary>Every entry (user key, sequence, type) stored in the tables of <paramref name="level"/>, in order.</summary>
    public static List<(string Key, ulong Seq, ValueType Type)> Entries(KvDb db, IFileSystem fs, int level)
    {
        var result = new List<(string, ulong, ValueType)>();
        foreach (FileMetaData f in db.Impl.Versions.Current.Files(level))
        {
            string path = FileNames.TableFile(db.Path, f.Number);
            using TableReader reader = TableReader.Open(fs.OpenRandomAccess(path), (long)f.FileSize, new TableOptions(), path);
            using InternalIterator it = reader.NewIterator(verifyChecksums: true);
            for (it.SeekToFirst(); it.Valid; it.Next())
            {
                result.Add((Encoding.ASCII.GetString(InternalKeys.UserKey(it.Key)), InternalKeys.Sequence(it.Key), InternalKeys.Type(it.Key)));
            }
        }
        return result;
    }

    public static int Files(KvDb db, int level) => db.Impl.Versions.Current.NumFiles(level);

    /// <summary>Waits (at most a minute) until no flush or compaction runs or is pending, as db_bench's waitforcompaction.</summary>
    public static void WaitForCompactions(KvDb db)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromMinutes(1);
        while (db.GetProperty("rocksdb.compaction-pending") != "0" || db.GetProperty("rocksdb.num-running-compactions") != "0" ||
            db.GetProperty("rocksdb.num-running-flushes") != "0")
        {
            Assert.True(DateTime.UtcNow < deadline, "background work did not settle within a minute");
            Thread.Sleep(20);
        }
    }

    /// <summary>A synthetic file [smallest, largest] (user keys) of <paramref name="size"/> bytes.</summary>
    public static FileMetaData File(ulong number, string smallest, string largest, long size, ulong seq = 1) => new()
    {
        Number = number,
        FileSize = (ulong)size,
        Smallest = InternalKeys.Create(K(smallest), seq, ValueType.Value),
        Largest = InternalKeys.Create(K(largest), seq, ValueType.Value),
        SmallestSeqno = seq,
        LargestSeqno = seq,
    };

    /// <summary>A version (no owner) with the given files per level.</summary>
    public static Version MakeVersion(params (int Level, FileMetaData File)[] files)
    {
        var builder = new VersionBuilder(Version.Empty(null));
        var edit = new VersionEdit();
        foreach ((int level, FileMetaData f) in files)
        {
            edit.AddFile(level, f);
        }
        builder.Apply(edit);
        return builder.Build(null);
    }
}
