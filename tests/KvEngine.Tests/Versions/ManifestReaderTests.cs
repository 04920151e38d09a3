using System.Text;
using KvEngine.Db;
using KvEngine.Format;
using KvEngine.Versions;
using KvEngine.Storage;
using KvEngine.Util;
using KvEngine.Wal;

namespace KvEngine.Tests.Db;

/// <summary>
/// <see cref="ManifestReader"/> on hand-written MANIFESTs: column-family records, atomic groups
/// (whole or not at all), and the records that are corruption.
/// </summary>
public class ManifestReaderTests
{
    private const string Dir = DbTestUtil.DbPath;

    private static FaultInjectionFileSystem WriteManifest(params VersionEdit[] edits)
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        fs.CreateDirectory(Dir);
        using (IWritableFile file = fs.CreateWritable(FileNames.ManifestFile(Dir, 1)))
        {
            var log = new LogWriter(file);
            using var buf = new ByteBuffer();
            foreach (VersionEdit e in edits)
            {
                buf.Clear();
                e.EncodeTo(buf);
                log.AddRecord(buf.WrittenSpan);
            }
            file.Sync();
        }
        fs.WriteAllBytes(FileNames.CurrentFile(Dir), Encoding.ASCII.GetBytes("MANIFEST-000001\n"));
        return fs;
    }

    private static VersionEdit Base() => new()
    {
        Comparator = InternalKeyComparer.BytewiseComparatorName,
        LogNumber = 3,
        NextFileNumber = 10,
        LastSequence = 5,
    };

    private static VersionEdit AddFamily(uint id, string name) => new()
    {
        ColumnFamily = id,
        ColumnFamilyAdd = name,
        Comparator = InternalKeyComparer.BytewiseComparatorName,
    };

    private static RecoveredManifest Read(FaultInjectionFileSystem fs) => ManifestReader.Read(fs, Dir, bestEfforts: false, new WalTracker());

    [Fact]
    public void FamiliesAreAddedAndDroppedAndListedInIdOrder()
    {
        FaultInjectionFileSystem fs = WriteManifest(Base(), AddFamily(1, "one"), AddFamily(2, "two"),
            new VersionEdit { ColumnFamily = 1, LogNumber = 8 },
            new VersionEdit { ColumnFamily = 2, IsColumnFamilyDrop = true, MaxColumnFamily = 2 },
            AddFamily(3, "three"));
        RecoveredManifest m = Read(fs);
        Assert.Equal(new uint[] { 0, 1, 3 }, m.Families.Keys);
        Assert.Equal(8UL, m.Families[1].LogNumber);
        Assert.Equal(3U, m.MaxColumnFamily);
        Assert.Equal(new[] { "default", "one", "three" }, ManifestReader.ListColumnFamilies(fs, Dir));
    }

    [Fact]
    public void ACompleteAtomicGroupAppliesAndATornOneDoesNot()
    {
        FaultInjectionFileSystem fs = WriteManifest(Base(), AddFamily(1, "one"),
            new VersionEdit { ColumnFamily = 0, LogNumber = 7, AtomicGroupRemaining = 1 },
            new VersionEdit { ColumnFamily = 1, LogNumber = 7, AtomicGroupRemaining = 0 },
            new VersionEdit { ColumnFamily = 0, LogNumber = 9, AtomicGroupRemaining = 1, LastSequence = 99 });
        RecoveredManifest m = Read(fs);
        Assert.Equal(7UL, m.Families[0].LogNumber);
        Assert.Equal(7UL, m.Families[1].LogNumber);
        Assert.Equal(5UL, m.LastSequence); // the torn group's counters are not taken either
    }

    [Fact]
    public void AnAtomicGroupInterruptedOrOutOfOrderIsCorruption()
    {
        FaultInjectionFileSystem interrupted = WriteManifest(Base(),
            new VersionEdit { LogNumber = 7, AtomicGroupRemaining = 1 },
            new VersionEdit { LogNumber = 8 });
        Assert.Throws<KvCorruptionException>(() => Read(interrupted));
        FaultInjectionFileSystem outOfOrder = WriteManifest(Base(),
            new VersionEdit { LogNumber = 7, AtomicGroupRemaining = 2 },
            new VersionEdit { LogNumber = 8, AtomicGroupRemaining = 0 });
        Assert.Throws<KvCorruptionException>(() => Read(outOfOrder));
    }

    [Theory]
    [InlineData("add-twice")]
    [InlineData("drop-unknown")]
    [InlineData("edit-unknown")]
    [InlineData("same-name")]
    [InlineData("drop-default")]
    public void BadFamilyRecordsAreCorruption(string what)
    {
        VersionEdit[] bad = what switch
        {
            "add-twice" => [AddFamily(1, "one"), AddFamily(1, "uno")],
            "drop-unknown" => [new VersionEdit { ColumnFamily = 4, IsColumnFamilyDrop = true }],
            "edit-unknown" => [new VersionEdit { ColumnFamily = 4, LogNumber = 9 }],
            "same-name" => [AddFamily(1, "one"), AddFamily(2, "one")],
            _ => [new VersionEdit { ColumnFamily = 0, IsColumnFamilyDrop = true }],
        };
        FaultInjectionFileSystem fs = WriteManifest([Base(), .. bad]);
        Assert.Throws<KvCorruptionException>(() => Read(fs));
    }

    [Fact]
    public void EditsOfADroppedFamilyAreIgnored()
    {
        FaultInjectionFileSystem fs = WriteManifest(Base(), AddFamily(1, "one"),
            new VersionEdit { ColumnFamily = 1, IsColumnFamilyDrop = true },
            new VersionEdit { ColumnFamily = 1, LogNumber = 12 });
        RecoveredManifest m = Read(fs);
        Assert.Equal(new uint[] { 0 }, m.Families.Keys);
    }

    [Fact]
    public void AFamilyWithoutAComparatorIsCorruption()
    {
        FaultInjectionFileSystem fs = WriteManifest(Base(), new VersionEdit { ColumnFamily = 1, ColumnFamilyAdd = "one" });
        Assert.Throws<KvCorruptionException>(() => Read(fs));
    }
}
