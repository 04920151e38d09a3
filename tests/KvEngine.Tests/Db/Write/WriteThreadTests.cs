using KvEngine.Db;
using KvEngine.Db.State;
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

    [Fact]
    public void AfterAWriterQueuedLoneGroupsPipelineForAWhileThenInsertAlone()
    {
        using var batch = new WriteBatch();
        batch.Put("k"u8, "v"u8);
        var mutex = new DbMutex();
        using var thread = new WriteThread(mutex, spinIterations: 0, new NoWorker());
        thread.InitializeSequences(0);
        using (mutex.Lock())
        {
            // One writer on an idle queue inserts alone, with the single-writer path.
            Assert.False(RunLoneGroup(thread, batch));

            // A second writer queues behind the first (the two make one group), ...
            WriteRequest first = Waiting(batch);
            WriteRequest second = Waiting(batch);
            Assert.True(thread.Enqueue(first));
            Assert.False(thread.Enqueue(second));
            WriteGroup both = thread.BeginGroup(first);
            thread.AddFollowers(both);
            Assert.Equal(2, both.Members.Count);
            WriteRequest? asyncHead = null;
            Assert.True(thread.ChooseInsertMode(both, ref asyncHead));
            Assert.Null(thread.FinishGroup(both));

            // ... so the lone groups after it pipeline (concurrent inserts the next writer can
            // overlap) for a window of groups, then a lone writer inserts alone again.
            int pipelined = 0;
            while (RunLoneGroup(thread, batch))
            {
                pipelined++;
                Assert.True(pipelined <= 1000, "lone groups kept pipelining");
            }
            Assert.True(pipelined > 1);
            Assert.False(RunLoneGroup(thread, batch));
            Assert.False(thread.HasInflightInserts);
        }
    }

    // One writer's group from enqueue to finish, as DbWriter runs it (the caller holds the mutex);
    // true when its insert was concurrent.
    private static bool RunLoneGroup(WriteThread thread, WriteBatch batch)
    {
        WriteRequest request = Waiting(batch);
        Assert.True(thread.Enqueue(request));
        WriteGroup group = thread.BeginGroup(request);
        thread.AddFollowers(group);
        bool concurrent = false;
        if (thread.IsLoneGroup(group))
        {
            thread.UseSingleWriterInsert(group);
        }
        else
        {
            WriteRequest? asyncHead = null;
            concurrent = thread.ChooseInsertMode(group, ref asyncHead);
            Assert.Null(asyncHead);
        }
        thread.FinishGroup(group);
        return concurrent;
    }

    private sealed class NoWorker : IWriteGroupWorker
    {
        public WriteGroup PrepareGroup(WriteRequest leader) => throw new InvalidOperationException("not used");

        public void InsertAssigned(WriteRequest request) => throw new InvalidOperationException("not used");
    }
}
