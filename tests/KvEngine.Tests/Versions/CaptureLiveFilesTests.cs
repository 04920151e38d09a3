using KvEngine.Storage;
using KvEngine.Versions;

namespace KvEngine.Tests.Versions;

/// <summary>
/// The live-file capture (checkpoints, GetLiveFiles) bounds its WALs by what the captured MANIFEST
/// records, not by an idle family's in-memory log number: a copy without the WALs in between would
/// hold a MANIFEST that tracks them as live, and KvEngine refuses such a database at open.
/// </summary>
public sealed class CaptureLiveFilesTests
{
    [Fact]
    public void TheWalBoundIsTheRecordedOneNotAnIdleFamilysInMemoryAdvance()
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/db");
        using var versions = new VersionSet("/db", fs);
        versions.CreateNew();
        versions.Recover();
        ColumnFamilyVersions b = versions.CreateFamily("b", 5);
        versions.LogAndApply(new VersionEdit { ColumnFamily = ColumnFamilyVersions.DefaultId, LogNumber = 9 });
        versions.LogAndApply(new VersionEdit { ColumnFamily = b.Id, LogNumber = 7 });

        versions.CaptureLiveFiles(out _, out _, out ulong before);
        Assert.Equal(7UL, before);

        // A WAL switch finds b idle: its log number moves to 12 in memory only.
        versions.AdvanceLogNumber(b, 12);
        Assert.Equal(9UL, versions.MinLogNumberToKeep); // the live database may drop WALs 7 and 8
        versions.CaptureLiveFiles(out _, out _, out ulong captured);
        Assert.Equal(7UL, captured); // a copy of this MANIFEST still needs them

        versions.LogAndApply(new VersionEdit { ColumnFamily = b.Id, LogNumber = 12 });
        versions.CaptureLiveFiles(out _, out _, out ulong recorded);
        Assert.Equal(9UL, recorded);
    }
}
