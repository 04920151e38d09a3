using System.Text;
using System.Text.RegularExpressions;
using KvEngine.Format;
using KvEngine.Versions;
using KvEngine.Storage;
using KvEngine.Tests.Wal;
using KvEngine.Util;
using KvEngine.Wal;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Versions;

/// <summary>
/// MANIFESTs written by RocksDB 7.8 (ldb) decoded by us and compared with `ldb manifest_dump
/// --verbose`; MANIFESTs and WALs we wrote read by RocksDB: dumped, and opened as a database.
/// </summary>
public sealed partial class RocksDbManifestInteropTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-manifest-");

    public void Dispose() => _dir.Delete(recursive: true);

    [GeneratedRegex(@"VersionEdit \{.*?\n\}", RegexOptions.Singleline)]
    private static partial Regex EditBlock();

    [GeneratedRegex(@" public_unique_id: [0-9A-F-]+")]
    private static partial Regex PublicUniqueId();

    private static string CurrentManifest(string db) =>
        Path.Combine(db, File.ReadAllText(Path.Combine(db, "CURRENT")).TrimEnd('\n'));

    private static List<string> LdbEdits(string manifest)
    {
        string output = RocksDbTools.RunOk("ldb", "manifest_dump", "--verbose", $"--path={manifest}");
        return EditBlock().Matches(output).Select(m => PublicUniqueId().Replace(m.Value, "")).ToList();
    }

    private static List<VersionEdit> OurEdits(string manifest)
    {
        var reader = LogReader.ForManifest(new InMemorySequentialFile(File.ReadAllBytes(manifest)), manifest);
        using var scratch = new ByteBuffer();
        var edits = new List<VersionEdit>();
        while (reader.TryReadRecord(scratch, out ReadOnlySpan<byte> record))
        {
            edits.Add(VersionEdit.Decode(record));
        }
        return edits;
    }

    private static void AssertSameEdits(string manifest)
    {
        List<string> theirs = LdbEdits(manifest);
        List<string> ours = OurEdits(manifest).Select(e => e.ToString()).ToList();
        Assert.NotEmpty(theirs);
        Assert.Equal(theirs, ours);
    }

    private static void WriteManifest(string path, IEnumerable<VersionEdit> edits)
    {
        using var file = new LocalWritableFile(path);
        var writer = new LogWriter(file);
        using var buffer = new ByteBuffer();
        foreach (VersionEdit edit in edits)
        {
            buffer.Clear();
            edit.EncodeTo(buffer);
            writer.AddRecord(buffer.WrittenSpan);
        }
        file.Sync();
    }

    [Fact]
    public void DecodesFlushAndCompactionEditsOfRocksDb()
    {
        string db = Path.Combine(_dir.FullName, "flush");
        RocksDbTools.RunOk("ldb", $"--db={db}", "--create_if_missing", "put", "k1", "v1");
        RocksDbTools.RunOk("ldb", $"--db={db}", "put", "k2", "v2");
        RocksDbTools.RunOk("ldb", $"--db={db}", "delete", "k1");
        RocksDbTools.RunOk("ldb", $"--db={db}", "deleterange", "a", "c");
        RocksDbTools.RunOk("ldb", $"--db={db}", "compact");
        string manifest = CurrentManifest(db);
        List<VersionEdit> edits = OurEdits(manifest);
        Assert.Contains(edits, e => e.DeletedFiles.Count > 0);
        Assert.Contains(edits, e => e.NewFiles.Any(f => f.Level == 1));
        Assert.Equal("leveldb.BytewiseComparator", edits[0].Comparator);
        AssertSameEdits(manifest);
    }

    [Fact]
    public void DecodesColumnFamilyEditsOfRocksDb()
    {
        string db = Path.Combine(_dir.FullName, "cf");
        RocksDbTools.RunOk("ldb", $"--db={db}", "--create_if_missing", "put", "seed", "x");
        RocksDbTools.RunOk("ldb", $"--db={db}", "create_column_family", "cf1");
        RocksDbTools.RunOk("ldb", $"--db={db}", "--column_family=cf1", "put", "ck", "cv");
        RocksDbTools.RunOk("ldb", $"--db={db}", "drop_column_family", "cf1");
        string manifest = CurrentManifest(db);
        List<VersionEdit> edits = OurEdits(manifest);
        Assert.Contains(edits, e => e.ColumnFamilyAdd == "cf1" && e.ColumnFamily == 1);
        Assert.Contains(edits, e => e.IsColumnFamilyDrop && e.ColumnFamily == 1);
        AssertSameEdits(manifest);
    }

    [Fact]
    public void LdbDumpsAManifestWeWrote()
    {
        var first = new VersionEdit { Comparator = "leveldb.BytewiseComparator", LogNumber = 0, NextFileNumber = 2, LastSequence = 0 };
        var flush = new VersionEdit { LogNumber = 9, PrevLogNumber = 0, NextFileNumber = 30, LastSequence = 1234, MinLogNumberToKeep = 9 };
        flush.AddFile(0, new FileMetaData
        {
            Number = 12,
            FileSize = 5000,
            Smallest = InternalKeys.Create("apple"u8, 100, ValueType.Value),
            Largest = InternalKeys.Create("pear"u8, 1234, ValueType.Deletion),
            SmallestSeqno = 100,
            LargestSeqno = 1234,
            OldestAncesterTime = 1_700_000_000,
            FileCreationTime = 1_700_000_123,
            UniqueId0 = 17298808299994853503,
            UniqueId1 = 11877905006432797305,
        });
        flush.AddFile(0, new FileMetaData
        {
            Number = 13,
            FileSize = 6000,
            Smallest = InternalKeys.Create("a"u8, 7, ValueType.RangeDeletion),
            Largest = InternalKeys.Create("c"u8, InternalKeys.MaxSequenceNumber, ValueType.RangeDeletion),
            SmallestSeqno = 7,
            LargestSeqno = 7,
            FileChecksum = new byte[] { 0xAB, 0xCD },
            FileChecksumFuncName = "FileChecksumCrc32c",
        });
        var compaction = new VersionEdit { LastSequence = 1234 };
        compaction.DeleteFile(0, 12);
        compaction.DeleteFile(0, 13);
        compaction.AddFile(1, new FileMetaData
        {
            Number = 14,
            FileSize = 7000,
            Smallest = InternalKeys.Create("apple"u8, 0, ValueType.Value),
            Largest = InternalKeys.Create("pear"u8, 0, ValueType.Value),
        });
        var addFamily = new VersionEdit { Comparator = "leveldb.BytewiseComparator", ColumnFamily = 1, ColumnFamilyAdd = "cf1" };
        var dropFamily = new VersionEdit { NextFileNumber = 31, MaxColumnFamily = 1, LastSequence = 1234, ColumnFamily = 1, IsColumnFamilyDrop = true };
        var edits = new[] { first, flush, compaction, addFamily, dropFamily };

        string manifest = Path.Combine(_dir.FullName, "MANIFEST-000001");
        WriteManifest(manifest, edits);
        Assert.Equal(edits.Select(e => e.ToString()), LdbEdits(manifest));
        AssertSameEdits(manifest);
    }

    [Fact]
    public void RocksDbOpensADatabaseFromOurManifestAndWal()
    {
        string db = Path.Combine(_dir.FullName, "ours");
        Directory.CreateDirectory(db);
        WriteManifest(Path.Combine(db, "MANIFEST-000001"), new[]
        {
            new VersionEdit { Comparator = "leveldb.BytewiseComparator", LogNumber = 0, NextFileNumber = 10, LastSequence = 0 },
        });
        File.WriteAllText(Path.Combine(db, "CURRENT"), "MANIFEST-000001\n");

        using (var file = new LocalWritableFile(Path.Combine(db, "000005.log")))
        {
            var writer = new LogWriter(file);
            ulong sequence = 1;
            for (int i = 0; i < 20; i++)
            {
                using var batch = new WriteBatch();
                batch.Put(Encoding.ASCII.GetBytes($"key{i:D2}"), Encoding.ASCII.GetBytes($"value{i}"));
                if (i > 0 && i % 5 == 0)
                {
                    batch.Delete(Encoding.ASCII.GetBytes($"key{i - 1:D2}"));
                }
                batch.Sequence = sequence;
                sequence += (ulong)batch.Count;
                writer.AddRecord(batch.Data);
            }
            file.Sync();
        }

        string scan = RocksDbTools.RunOk("ldb", $"--db={db}", "scan");
        var expected = new StringBuilder();
        for (int i = 0; i < 20; i++)
        {
            if (i % 5 != 4 || i == 19)
            {
                expected.Append($"key{i:D2} : value{i}\n");
            }
        }
        Assert.Equal(expected.ToString(), scan);
    }
}
