using KvEngine.Db.Errors;
using KvEngine.Db.State;
using KvEngine.Diagnostics;

namespace KvEngine.Db.Write;

/// <summary>
/// Memtable inserts of a commit group. A single-writer insert (the option off, or a lone writer
/// with nothing else inserting: <see cref="WriteThread.ChooseInsertMode"/>) has the leader insert
/// every batch with the single-writer skiplist path. A concurrent one (other groups may insert at
/// the same time, or the group has several writers) takes the concurrent path for every insert,
/// and the members help (RocksDB's parallel memtable writes): the leader gives each member batch
/// its first sequence number and hands it to the member's thread if that thread is still spinning
/// (<see cref="WriteRequest.TryAssignInsert"/>: a compare-and-swap that loses to a waiter about to
/// sleep, whose batch the leader then inserts itself, as it does the batches of asynchronous
/// requests, which have no thread). The leader inserts its share and waits until every handed-out
/// insert has ended before the group may publish.
/// <para>
/// Invariants: a group's memtables do not switch while the group inserts (a switch waits for the
/// write thread's in-flight inserts to drain); the group and each request's sequence are written
/// before the assigning compare-and-swap (a full fence) and read after it; a group's
/// pending-insert count is raised before an assignment and lowered by the member when its insert
/// ends, error or not. After a failed insert no later group publishes
/// (<see cref="WriteThread.MarkInsertFailed"/>) and the database stops on the background error.
/// </para>
/// <para>
/// Thread-safety: inserts run outside the database mutex; a failure is recorded under it. The
/// member-insert count is interlocked.
/// </para>
/// </summary>
internal sealed class WriteGroupInserter
{
    private readonly DbMutex _mutex;
    private readonly WriteThread _writeThread;
    private readonly ErrorHandler _errors;
    private long _memberInserts;

    public WriteGroupInserter(DbMutex mutex, WriteThread writeThread, ErrorHandler errors)
    {
        _mutex = mutex;
        _writeThread = writeThread;
        _errors = errors;
    }

    /// <summary>Batches inserted by their own writer thread in a concurrent group (tests, diagnostics).</summary>
    public long MemberInserts => Interlocked.Read(ref _memberInserts);

    /// <summary>Leader, outside the mutex: inserts the group's batches; a failure becomes the group's error and stops the database.</summary>
    public void InsertGroup(WriteGroup group, bool concurrent)
    {
        _mutex.AssertNotHeld();
        ColumnFamilyData?[] families = group.Families;
        try
        {
            int handedOut = 0;
            ulong sequence = group.FirstSequence;
            foreach (WriteRequest w in group.Members)
            {
                w.InsertSequence = sequence;
                sequence += (ulong)w.Batch!.Count;
                if (concurrent && w != group.Leader && WriteThread.TryHandOutInsert(group, w))
                {
                    handedOut++;
                }
            }
            if (handedOut > 0)
            {
                Interlocked.Add(ref _memberInserts, handedOut);
            }
            foreach (WriteRequest w in group.Members)
            {
                if (!w.InsertHandedOut)
                {
                    var inserter = new MemTableInserter(families, w.InsertSequence, concurrent);
                    w.Batch!.Iterate(ref inserter);
                }
            }
        }
        catch (Exception e)
        {
            group.Error ??= e;
        }
        finally
        {
            var spin = new SpinWait();
            while (group.HasPendingInserts)
            {
                spin.SpinOnce(sleep1Threshold: -1);
            }
        }
        if (group.TakeMemberInsertError() is { } memberError)
        {
            group.Error ??= memberError;
        }
        if (group.Error is { } error)
        {
            using (_mutex.Lock())
            {
                _writeThread.MarkInsertFailed();
                _errors.SetBackgroundError(error, BackgroundJobKind.MemTableInsert);
            }
        }
    }

    /// <summary>Member, outside the mutex: inserts its own batch at the sequence the leader gave it.</summary>
    public static void InsertAssigned(WriteRequest request)
    {
        WriteGroup group = request.Group!;
        try
        {
            var inserter = new MemTableInserter(group.Families, request.InsertSequence, concurrent: true);
            request.Batch!.Iterate(ref inserter);
        }
        catch (Exception e)
        {
            group.SetMemberInsertError(e);
        }
        finally
        {
            request.MarkInserted();
            group.EndPendingInsert();
        }
    }
}
