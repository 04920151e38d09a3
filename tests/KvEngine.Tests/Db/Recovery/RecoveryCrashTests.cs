using KvEngine.Storage;

namespace KvEngine.Tests.Db.Recovery;

/// <summary>
/// Recovery and flushes are crash-safe: an I/O error at any single file operation of an open
/// (replaying WALs into tables, writing the new MANIFEST, switching CURRENT, deleting obsolete
/// files) or of a Flush, followed by nothing, a process crash or a power loss, leaves a database
/// that the next open recovers with every acknowledged write. A failed open raises KvException
/// and releases the lock.
/// </summary>
public sealed class RecoveryCrashTests
{
    public static TheoryData<string> Endings() => new() { "none", "process crash", "power loss" };

    [Theory]
    [MemberData(nameof(Endings))]
    public void OpenFailingAtAnyFileOperationLeavesThePreviousState(string ending)
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        KvOptions o = DbTestUtil.SmallOptions(fs, 16 << 10);
        o.DisableAutoCompactions = true; // the failure is injected at the Nth file operation: keep their order fixed
        var model = new SortedDictionary<string, string>(StringComparer.Ordinal);
        using (KvDb db = KvDb.Open(DbTestUtil.DbPath, o))
        {
            var rng = new Random(3);
            for (int i = 0; i < 400; i++)
            {
                string k = $"r{rng.Next(300):D4}";
                string v = $"{i}-" + new string('r', rng.Next(100));
                db.Put(DbTestUtil.B(k), DbTestUtil.B(v));
                model[k] = v;
            }
        }
        // A closed database with tables and WALs to replay.
        Assert.NotEmpty(DbTestUtil.ListFiles(fs, DbTestUtil.DbPath).Tables);
        Assert.NotEmpty(DbTestUtil.ListFiles(fs, DbTestUtil.DbPath).Logs);
        FsSnapshot before = FsSnapshot.Take(fs, DbTestUtil.DbPath);

        int operations = 0;
        fs.ShouldFail = (_, _) =>
        {
            operations++;
            return false;
        };
        KvDb counted = KvDb.Open(DbTestUtil.DbPath, o);
        fs.ShouldFail = null; // count the open's operations only, not those of closing
        counted.Dispose();
        Assert.True(operations > 10, $"an open took only {operations} file operations");

        for (int failAt = 1; failAt <= operations; failAt++)
        {
            before.Restore(fs);
            int seen = 0;
            int target = failAt;
            fs.ShouldFail = (_, _) => ++seen == target;
            KvDb? opened = null;
            try
            {
                opened = KvDb.Open(DbTestUtil.DbPath, o);
            }
            catch (KvException)
            {
                // The injected error, reported as the database's own.
            }
            if (opened != null)
            {
                // The failing operation was one an open may survive (e.g. deleting an obsolete file).
                Assert.Equal(model, DbTestUtil.ReadAll(opened));
            }
            switch (ending)
            {
                case "process crash":
                    DbTestUtil.Abandon(fs, opened, powerLoss: false);
                    break;
                case "power loss":
                    DbTestUtil.Abandon(fs, opened, powerLoss: true);
                    break;
                default:
                    fs.ShouldFail = null;
                    opened?.Dispose();
                    break;
            }
            using KvDb db = KvDb.Open(DbTestUtil.DbPath, o);
            Assert.True(model.Count == DbTestUtil.ReadAll(db).Count && DbTestUtil.ReadAll(db).SequenceEqual(model),
                $"open failing at operation {failAt} of {operations}, then {ending}: the state changed");
        }
    }

    [Theory]
    [MemberData(nameof(Endings))]
    public void FlushFailingAtAnyFileOperationLosesNoAcknowledgedWrite(string ending)
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        KvOptions o = DbTestUtil.SmallOptions(fs, 1 << 20);
        o.DisableAutoCompactions = true; // the failure is injected at the Nth file operation: keep their order fixed
        var sync = new WriteOptions { Sync = true };
        var model = new SortedDictionary<string, string>(StringComparer.Ordinal);
        using (KvDb db = KvDb.Open(DbTestUtil.DbPath, o))
        {
            for (int i = 0; i < 300; i++)
            {
                db.Put(DbTestUtil.B($"a{i:D4}"), DbTestUtil.B($"old{i}"), sync);
                model[$"a{i:D4}"] = $"old{i}";
            }
            db.Flush();
        }
        FsSnapshot closed = FsSnapshot.Take(fs, DbTestUtil.DbPath);
        for (int i = 0; i < 300; i += 2)
        {
            model[$"a{i:D4}"] = $"new{i}";
        }

        int operations = -1;
        for (int failAt = 0; operations < 0 || failAt <= operations; failAt++)
        {
            closed.Restore(fs);
            KvDb db = KvDb.Open(DbTestUtil.DbPath, o);
            for (int i = 0; i < 300; i += 2)
            {
                db.Put(DbTestUtil.B($"a{i:D4}"), DbTestUtil.B($"new{i}"), sync);
            }
            int seen = 0;
            int target = failAt;
            // failAt 0 counts the operations of a successful flush.
            fs.ShouldFail = (_, _) => ++seen == target;
            try
            {
                db.Flush();
            }
            catch (KvException)
            {
                // The injected error; the database now refuses writes.
            }
            if (failAt == 0)
            {
                operations = seen;
                Assert.True(operations > 3, $"a flush took only {operations} file operations");
            }
            switch (ending)
            {
                case "process crash":
                    DbTestUtil.Abandon(fs, db, powerLoss: false);
                    break;
                case "power loss":
                    DbTestUtil.Abandon(fs, db, powerLoss: true);
                    break;
                default:
                    fs.ShouldFail = null;
                    try
                    {
                        db.Dispose();
                    }
                    catch (KvException)
                    {
                        // Closing after a background error may report it again.
                    }
                    break;
            }
            using KvDb again = KvDb.Open(DbTestUtil.DbPath, o);
            SortedDictionary<string, string> all = DbTestUtil.ReadAll(again);
            Assert.True(all.Count == model.Count && all.SequenceEqual(model),
                $"flush failing at operation {failAt} of {operations}, then {ending}: acknowledged writes changed");
        }
    }
}
