using System.Buffers;
using System.Text;
using KvEngine.Cache;
using KvEngine.Db.Read;
using KvEngine.Format;
using KvEngine.Storage;
using KvEngine.Table;
using KvEngine.Tests.Table;
using KvEngine.Versions;

using ValueType = KvEngine.Format.ValueType;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Tests.Db.Read;

/// <summary>
/// The walk over a version's files for one key (<see cref="FilePicker"/>): level-0 order, the
/// sorted levels' search at file boundaries, range-tombstone covering across levels, and the
/// GetStats a Get returns.
/// </summary>
public sealed class FilePickerTests : IDisposable
{
    private const ulong ReadAll = InternalKeys.MaxSequenceNumber;

    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-filepicker-");
    private readonly List<IDisposable> _owned = new();

    public void Dispose()
    {
        foreach (IDisposable d in _owned)
        {
            d.Dispose();
        }
        _dir.Delete(recursive: true);
    }

    [Fact]
    public void LevelZeroFilesHoldingTheKeyComeNewestFirstThenEachDeeperLevel()
    {
        Version v = VersionOf(
            (0, Meta(9, "a", "f")), (0, Meta(8, "m", "z")), (0, Meta(7, "c", "d")), (0, Meta(6, "d", "d")),
            (1, Meta(5, "a", "c")), (1, Meta(4, "d", "k")),
            (3, Meta(3, "a", "z")));

        Assert.Equal([(9UL, 0), (7UL, 0), (6UL, 0), (4UL, 1), (3UL, 3)], Walk(v, "d"));
        Assert.Equal([(8UL, 0), (3UL, 3)], Walk(v, "p"));
    }

    [Theory]
    [InlineData("a", 0UL)] // before the first file
    [InlineData("b", 1UL)] // the first file's smallest key
    [InlineData("c", 1UL)]
    [InlineData("d", 1UL)] // its largest key
    [InlineData("e", 0UL)] // between two files
    [InlineData("f", 2UL)]
    [InlineData("h", 2UL)]
    [InlineData("j", 3UL)]
    [InlineData("l", 3UL)] // the last file's largest key
    [InlineData("m", 0UL)] // past the last file
    public void ASortedLevelIsSearchedByItsFilesBounds(string key, ulong file)
    {
        Version v = VersionOf((2, Meta(1, "b", "d")), (2, Meta(2, "f", "h")), (2, Meta(3, "j", "l")));

        List<(ulong, int)> walk = Walk(v, key);

        Assert.Equal(file == 0 ? [] : [(file, 2)], walk);
    }

    [Fact]
    public void AFileEndingAtATombstonesExclusiveEndLeavesTheKeyToTheNextFile()
    {
        Version v = VersionOf((1, Meta(1, "b", "d", sentinelEnd: true)), (1, Meta(2, "d", "f")));

        Assert.Equal([(2UL, 1)], Walk(v, "d"));
        Assert.Equal([(1UL, 1)], Walk(v, "c"));
    }

    [Fact]
    public void AKeyThatEndsOneFileOfALevelIsAlsoLookedUpInTheNext()
    {
        Version v = VersionOf((1, Meta(1, "b", "d")), (1, Meta(2, "d", "f")), (1, Meta(3, "g", "h")), (2, Meta(4, "a", "z")));

        Assert.Equal([(1UL, 1), (2UL, 1), (4UL, 2)], Walk(v, "d"));
        Assert.Equal([(2UL, 1), (4UL, 2)], Walk(v, "f"));
    }

    [Fact]
    public void AGetFindsTheOlderVersionOfAKeySplitAcrossTwoFilesOfALevel()
    {
        // "d"@20 ends file 1 and "d"@10 starts file 2 (a level written by an engine that splits user
        // keys): at sequence 15 only the second file holds a visible entry.
        TableCache tables = Tables(null);
        FileMetaData newer = WriteTable(1, [(Key("b", 30), "b"), (Key("d", 20), "d20")]);
        FileMetaData older = WriteTable(2, [(Key("d", 10), "d10"), (Key("e", 5), "e")]);
        Version v = VersionOf((1, newer), (1, older));

        Assert.Equal("d10", Get(v, tables, "d", 15, out ValueType type, out int level, out _));
        Assert.Equal((ValueType.Value, 1), (type, level));
        Assert.Equal("d20", Get(v, tables, "d", ReadAll, out _, out _, out _));
    }

    [Fact]
    public void AMultiGetFindsTheOlderVersionOfAKeySplitAcrossTwoFilesOfALevel()
    {
        // As above, through MultiGet's batched walk over a database's family: level 1 holds "d"@20
        // at the end of one file and "d"@10 at the start of the next.
        string path = Path.Combine(_dir.FullName, "db");
        using KvDb db = KvDb.Open(path, new KvOptions());
        KvEngine.Db.State.ColumnFamilyData cfd = db.Impl.DefaultFamily;
        FileMetaData newer = WriteTable(9001, [(Key("b", 30), "b"), (Key("d", 20), "d20")], dir: path);
        FileMetaData older = WriteTable(9002, [(Key("d", 10), "d10"), (Key("e", 5), "e")], dir: path);
        KvEngine.Db.State.ReadState current = cfd.AcquireReadState();
        var state = new KvEngine.Db.State.ReadState(current.Mem, [], VersionOf((1, newer), (1, older)));
        current.Unref();
        ReadOnlyMemory<byte>[] keys = ["a"u8.ToArray(), "d"u8.ToArray(), "e"u8.ToArray(), "b"u8.ToArray()];
        using var results = new MultiGetResults();
        try
        {
            results.Reset(keys.Length);
            new MultiGetReader(null, static () => { }).MultiGet(cfd, state, 15, keys, results, new ReadOptions());
        }
        finally
        {
            state.Unref();
        }

        Assert.Equal([null, "d10", "e", null], Enumerable.Range(0, keys.Length).Select(i => results.ToArray(i) is { } v ? Encoding.ASCII.GetString(v) : null));
    }

    [Fact]
    public void ARangeTombstoneOfANewerLevelHidesOlderEntriesOnly()
    {
        TableCache tables = Tables(null);
        FileMetaData newest = WriteTable(1, [(Key("d", 80), "d80")]);
        FileMetaData tombstone = WriteTable(2, [(Key("x", 60), "x")], ("c", 50, "f"));
        FileMetaData oldest = WriteTable(3, [(Key("d", 10), "d10"), (Key("e", 12), "e12")]);
        Version withNewer = VersionOf((0, newest), (1, tombstone), (2, oldest));
        Version v = VersionOf((1, tombstone), (2, oldest));

        // The walk reaches the tombstone's file first and the tombstone covers "d" there.
        var picker = new FilePicker(v, "d"u8, ReadAll);
        Assert.True(picker.Next(out FileMetaData? file));
        Assert.Same(tombstone, file);
        Assert.False(picker.Covered);
        picker.Cover(tables.Get(file, picker.Level));
        Assert.Equal(50UL, picker.Covering);
        Assert.True(picker.Covered);

        Assert.Null(Get(v, tables, "d", ReadAll, out ValueType type, out int level, out _));
        Assert.Equal((ValueType.Deletion, 1), (type, level)); // decided at the tombstone's level
        Assert.Null(Get(v, tables, "e", ReadAll, out _, out _, out _));
        Assert.Equal("d10", Get(v, tables, "d", 40, out _, out level, out _)); // the tombstone is not visible at 40
        Assert.Equal(2, level);
        Assert.Equal("d80", Get(withNewer, tables, "d", ReadAll, out _, out level, out _)); // newer than the tombstone
        Assert.Equal(0, level);
        Assert.Equal("x", Get(v, tables, "x", ReadAll, out _, out _, out _)); // outside the tombstone
    }

    [Fact]
    public void AGetReportsTheFirstFileItReadFromDiskAndItsLevelZeroMisses()
    {
        FileMetaData level0 = WriteTable(1, [(Key("a", 90), "a"), (Key("z", 91), "z")]);
        FileMetaData level1 = WriteTable(2, [(Key("m", 10), "m")]);
        Version v = VersionOf((0, level0), (1, level1));
        TableCache tables = Tables(new LruCache(new LruCacheOptions { Capacity = 1 << 20, NumShardBits = 0 }));

        Assert.Equal("m", Get(v, tables, "m", ReadAll, out _, out _, out GetStats first));
        Assert.Same(level0, first.SeekFile); // level 0's block was read in vain, then level 1's
        Assert.Equal(0, first.SeekFileLevel);
        Assert.Equal(1, first.Level0Misses);
        Assert.True(first.ReadBelowLevel0);
        Assert.Equal(1, first.Level0Charge);

        Assert.Equal("m", Get(v, tables, "m", ReadAll, out _, out _, out GetStats cached));
        Assert.Null(cached.SeekFile); // every block came from the cache
        Assert.Equal(-1, cached.SeekFileLevel);
        Assert.Equal(0, cached.Level0Charge);

        TableCache cold = Tables(new LruCache(new LruCacheOptions { Capacity = 1 << 20, NumShardBits = 0 }));
        Assert.Null(Get(v, cold, "n", ReadAll, out _, out int level, out GetStats absent));
        Assert.Equal(-1, level);
        Assert.Same(level0, absent.SeekFile);
        Assert.Equal(1, absent.Level0Misses);
        Assert.False(absent.ReadBelowLevel0);
        Assert.Equal(0, absent.Level0Charge); // in no table: a compaction would leave this one search
    }

    private static List<(ulong Number, int Level)> Walk(Version v, string key)
    {
        var files = new List<(ulong, int)>();
        var picker = new FilePicker(v, Encoding.ASCII.GetBytes(key), ReadAll);
        while (picker.Next(out FileMetaData? f))
        {
            files.Add((f.Number, picker.Level));
        }
        return files;
    }

    private static string? Get(Version v, TableCache tables, string key, ulong sequence, out ValueType type, out int level, out GetStats stats)
    {
        var value = new ArrayBufferWriter<byte>();
        bool found = PointReader.TryGetFromTables(v, tables, Encoding.ASCII.GetBytes(key), sequence, value, verifyChecksums: true, fillCache: true,
            covering: 0, out type, out level, out stats);
        return found && type == ValueType.Value ? Encoding.ASCII.GetString(value.WrittenSpan) : null;
    }

    private static byte[] Key(string userKey, ulong sequence) => TableTestUtil.Key(userKey, sequence);

    private static FileMetaData Meta(ulong number, string smallest, string largest, bool sentinelEnd = false) => new()
    {
        Number = number,
        FileSize = 1,
        Smallest = TableTestUtil.Key(smallest, 1),
        Largest = sentinelEnd ? TableTestUtil.Key(largest, InternalKeys.MaxSequenceNumber, ValueType.RangeDeletion) : TableTestUtil.Key(largest, 1),
    };

    private static Version VersionOf(params (int Level, FileMetaData File)[] files)
    {
        var levels = new FileMetaData[Version.NumLevels][];
        for (int level = 0; level < levels.Length; level++)
        {
            levels[level] = files.Where(f => f.Level == level).Select(f => f.File).ToArray();
        }
        return new Version(null, levels);
    }

    private TableCache Tables(LruCache? cache)
    {
        var tables = new TableCache(_dir.FullName, LocalFileSystem.Instance, new TableOptions { BlockCache = cache }, null);
        _owned.Add(tables);
        if (cache != null)
        {
            _owned.Add(cache);
        }
        return tables;
    }

    // A table of the given entries (sorted) and at most one range tombstone [start, end) at its sequence.
    private FileMetaData WriteTable(ulong number, (byte[] Key, string Value)[] entries, (string Start, ulong Sequence, string End)? tombstone = null,
        string? dir = null)
    {
        byte[] table = TableTestUtil.Build(new TableOptions(), entries.Select(e => new Entry(e.Key, Encoding.ASCII.GetBytes(e.Value))), b =>
        {
            if (tombstone is { } t)
            {
                b.AddRangeTombstone(TableTestUtil.Key(t.Start, t.Sequence, ValueType.RangeDeletion), Encoding.ASCII.GetBytes(t.End));
            }
        });
        File.WriteAllBytes(FileNames.TableFile(dir ?? _dir.FullName, number), table);
        byte[] smallest = entries[0].Key;
        if (tombstone is { } r && string.CompareOrdinal(r.Start, Encoding.ASCII.GetString(InternalKeys.UserKey(smallest))) <= 0)
        {
            smallest = TableTestUtil.Key(r.Start, r.Sequence, ValueType.RangeDeletion);
        }
        return new FileMetaData { Number = number, FileSize = (ulong)table.Length, Smallest = smallest, Largest = entries[^1].Key };
    }
}
