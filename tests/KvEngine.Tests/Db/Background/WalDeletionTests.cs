using KvEngine.Db;
using KvEngine.Db.State;
using KvEngine.Storage;
using KvEngine.Versions;
using static KvEngine.Tests.Db.DbTestUtil;

namespace KvEngine.Tests.Db.Background;

/// <summary>
/// The sweeper never deletes a WAL the MANIFEST as written still needs at open. An idle family's
/// log number advances in memory at a memtable switch, with no edit; when that happens after a
/// flush built its MinLogNumberToKeep edit, every family's in-memory log number can pass the bound
/// the MANIFEST records, and a sweep that trusted the in-memory bound deleted WALs the MANIFEST
/// tracks as live: an open after a crash then refused the database (seen as
/// CheckpointTests.ACheckpointOfSeveralFamiliesOpensWithTheSameContents failing under load, the
/// checkpoint copying such a MANIFEST).
/// </summary>
public sealed class WalDeletionTests
{
    [Fact]
    public void AWalTheRecordedBoundKeepsSurvivesInMemoryLogNumbersRunningAhead()
    {
        FaultInjectionFileSystem fs = NewFs();
        var options = new KvOptions { FileSystem = fs, CreateMissingColumnFamilies = true };
        List<ColumnFamilyDescriptor> families = [new("default", new ColumnFamilyOptions()), new("b", new ColumnFamilyOptions())];
        ulong needed;
        using (KvDb db = KvDb.Open(DbPath, options, families))
        {
            ColumnFamilyHandle b = db.GetColumnFamily("b")!;
            db.Put(B("k"), B("v"));
            db.Put(b, B("k"), B("v"));
            db.Flush();
            db.Put(b, B("only-in-wal"), B("b-value")); // b's memtable holds data of the current WAL
            db.Put(B("k2"), B("v2"));
            db.Flush(db.DefaultColumnFamily); // a new WAL; the MANIFEST's bound stays at b's WAL
            VersionSet versions = db.Impl.Versions;
            needed = versions.RecordedMinLogNumberToKeep;
            Assert.True(fs.FileExists(FileNames.LogFile(DbPath, needed)));
            // What a later switch does to an idle family, here forced: b's log number runs ahead in
            // memory (no edit), so every family's in-memory log number is past the recorded bound.
            ulong ahead = versions.MinLogNumberToKeep;
            foreach (ColumnFamilyData cfd in db.Impl.LiveFamilies())
            {
                versions.AdvanceLogNumber(cfd.Versions, ahead + 1);
            }
            Assert.True(versions.MinLogNumberToKeep > needed);
            db.DisableFileDeletions();
            db.EnableFileDeletions(); // sweeps
            Assert.True(fs.FileExists(FileNames.LogFile(DbPath, needed)), "the sweep deleted a WAL the MANIFEST still needs");
        }
        // The MANIFEST as written opens, and b's unflushed write comes back from the kept WAL.
        using KvDb reopened = KvDb.Open(DbPath, options, families);
        Assert.Equal("b-value", S(reopened.Get(reopened.GetColumnFamily("b")!, B("only-in-wal"))!));
    }
}
