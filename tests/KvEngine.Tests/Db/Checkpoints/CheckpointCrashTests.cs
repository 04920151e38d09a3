using KvEngine.Storage;
using static KvEngine.Tests.Db.DbTestUtil;

namespace KvEngine.Tests.Db.Checkpoints;

/// <summary>
/// A power loss in the middle of a checkpoint, at each of its file operations in turn (the
/// process dies there: that operation and every later one fail, then unsynced data and directory
/// entries are lost): the source database reopens with every synced write, the checkpoint
/// directory is either absent or a complete database with the same contents, and a leftover
/// staging directory does not stop the next checkpoint into the same place.
/// </summary>
public sealed class CheckpointCrashTests
{
    private const string Checkpoint = Parent + "/ckpt";

    private static KvOptions Options(FaultInjectionFileSystem fs)
    {
        KvOptions o = SmallOptions(fs);
        o.CreateMissingColumnFamilies = true;
        return o;
    }

    private static KvDb Open(FaultInjectionFileSystem fs, string path) => KvDb.Open(path, Options(fs), [new ColumnFamilyDescriptor("default", Options(fs)), new ColumnFamilyDescriptor("cf")]);

    [Theory]
    [InlineData(0UL)]
    [InlineData(ulong.MaxValue)]
    public void APowerLossAtAnyStepOfACheckpointLosesNothing(ulong logSizeForFlush)
    {
        var synced = new WriteOptions { Sync = true };
        int completedCheckpoints = 0;
        for (int n = 1; ; n++)
        {
            FaultInjectionFileSystem fs = NewFs();
            KvDb db = Open(fs, DbPath);
            ColumnFamilyHandle cf = db.GetColumnFamily("cf")!;
            for (int i = 0; i < 200; i++)
            {
                db.Put(B($"k{i:D3}"), B($"v{i}"), synced);
            }
            db.Flush();
            db.Put(cf, B("cf-key"), B("in-wal"), synced);
            db.DeleteRange(B("k010"), B("k020"), synced);
            SortedDictionary<string, SortedDictionary<string, string>> expected = CheckpointContents.Read(db);

            int ops = 0;
            bool dead = false;
            fs.ShouldFail = (_, path) =>
            {
                if (!dead && path.StartsWith(Checkpoint, StringComparison.Ordinal) && ++ops == n)
                {
                    dead = true;
                    fs.SimulatePowerLoss(); // the machine goes down just before this operation
                }
                return dead;
            };
            bool finished;
            try
            {
                db.CreateCheckpoint(Checkpoint, logSizeForFlush);
                finished = !dead;
            }
            catch (KvException)
            {
                finished = false;
            }
            Abandon(fs, db, powerLoss: !dead);

            using (KvDb source = Open(fs, DbPath))
            {
                CheckpointContents.AssertEqual(expected, CheckpointContents.Read(source));
                if (fs.DirectoryExists(Checkpoint))
                {
                    using KvDb copy = Open(fs, Checkpoint);
                    CheckpointContents.AssertEqual(expected, CheckpointContents.Read(copy));
                    completedCheckpoints++;
                }
                else
                {
                    // A leftover staging directory is cleared by the next checkpoint.
                    source.CreateCheckpoint(Checkpoint, logSizeForFlush);
                    Assert.False(fs.DirectoryExists(Checkpoint + ".tmp"));
                    using KvDb copy = Open(fs, Checkpoint);
                    CheckpointContents.AssertEqual(expected, CheckpointContents.Read(copy));
                }
            }
            if (finished)
            {
                Assert.True(n > 10, $"a checkpoint of only {n - 1} file operations");
                break;
            }
        }
        Assert.True(completedCheckpoints >= 1); // at least the run that was not interrupted
    }
}
