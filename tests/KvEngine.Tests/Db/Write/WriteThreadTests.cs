using KvEngine.Db;
using KvEngine.Db.Write;

namespace KvEngine.Tests.Db.Write;

/// <summary>
/// The insert hand-off of <see cref="WriteThread"/>, deterministically: a member still spinning
/// takes its own insert; one that stopped taking inserts (about to sleep) and an asynchronous one
/// (no thread) are left to the leader; a handed-out insert is counted until the member ends it.
/// </summary>
public class WriteThreadTests
{
    private static WriteRequest Waiting(WriteBatch batch)
    {
        var r = new WriteRequest();
        r.Reset(batch, sync: false, disableWal: false, force: false);
        return r;
    }

    [Fact]
    public void AMemberStillSpinningTakesItsOwnInsert()
    {
        using var batch = new WriteBatch();
        batch.Put("k"u8, "v"u8);
        using var group = new WriteGroup();
        WriteRequest member = Waiting(batch);
        Assert.True(WriteThread.TryHandOutInsert(group, member));
        Assert.Equal(WriteRequest.InsertAssigned, member.InsertState);
        Assert.Same(group, member.Group);
        Assert.True(group.HasPendingInserts);
        // The member cannot stop taking inserts any more: it must insert, then end the insert.
        Assert.Equal(WriteRequest.InsertAssigned, member.StopTakingInserts());
        member.MarkInserted();
        group.EndPendingInsert();
        Assert.False(group.HasPendingInserts);
    }

    [Fact]
    public void ASleepingOrAsynchronousMemberIsLeftToTheLeader()
    {
        using var batch = new WriteBatch();
        batch.Put("k"u8, "v"u8);
        using var group = new WriteGroup();
        WriteRequest sleeper = Waiting(batch);
        Assert.Equal(WriteRequest.InsertWaiting, sleeper.StopTakingInserts());
        Assert.False(WriteThread.TryHandOutInsert(group, sleeper));
        Assert.False(sleeper.InsertHandedOut);
        WriteRequest asynchronous = WriteRequest.ForAsync(batch, WriteOptions.Default);
        Assert.False(WriteThread.TryHandOutInsert(group, asynchronous));
        Assert.False(group.HasPendingInserts);
    }
}
