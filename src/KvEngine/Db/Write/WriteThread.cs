using KvEngine.Db.Errors;
using KvEngine.Db.State;

namespace KvEngine.Db.Write;

/// <summary>
/// The writer queue and its commit groups (RocksDB's WriteThread): writers join an intrusive
/// queue; the one at its head leads a group of the writers behind it (same Sync and DisableWal
/// class, up to 1 MiB), and the group's sequence numbers are reserved in queue order. Followers
/// wait by spinning on their request's state (a commit takes microseconds), taking over their own
/// memtable insert if the leader hands it out, and only then sleep on the mutex.
/// <para>
/// Pipelining (with concurrent memtable writes): once its WAL record is written a group may leave
/// the queue before it inserts (<see cref="ChooseInsertMode"/>), so the next group's WAL write
/// overlaps its insert; groups still publish in sequence order (<see cref="AwaitTurnToPublish"/>:
/// the order cursor), and a memtable switch waits until no pipelined group is inserting
/// (<see cref="WaitForInflightInserts"/>).
/// </para>
/// <para>
/// Thread-safety: the queue, the group pool, the reserved sequence, the in-flight count and the
/// failure flag are guarded by the database mutex given at construction (the caller holds it
/// where a member says "holds the mutex"). The queue's head and the order cursor are also read
/// without it (volatile): a stale read only delays a waiter. Invariants: a request is in the queue
/// from <see cref="Enqueue"/> until its group leaves it; sequence numbers are reserved once, in
/// queue order, and published in that order; after an insert failed no later group publishes.
/// </para>
/// </summary>
internal sealed class WriteThread : IDisposable
{
    /// <summary>A group grows to at most this many bytes (RocksDB: 1 MiB, less for a small leader).</summary>
    private const int MaxGroupBytes = 1 << 20;

    /// <summary>
    /// Lone groups that still pipeline after a writer had to queue behind another: with two or more
    /// writers, one that arrives while a lone group inserts alone waits for that whole insert, so
    /// after such a wait lone groups leave the queue before inserting (concurrently) and the next
    /// writer overlaps them. A single writer never queues, so it keeps the single-writer path.
    /// </summary>
    private const int ContendedWindow = 64;

    private readonly DbMutex _mutex;
    private readonly int _spinIterations;
    private readonly IWriteGroupWorker _worker;
    private readonly Stack<WriteGroup> _groupPool = new();
    private WriteRequest? _head;
    private WriteRequest? _tail;
    private int _syncWaiters;
    private ulong _lastAllocatedSequence;
    private int _inflightInserts;
    private int _inflightWaiters;
    private ulong _orderCursor; // the last sequence of the newest group done, in order
    private bool _insertFailed; // an earlier group's insert failed: no later group may publish past its hole
    private bool _memTableHadConcurrentInserts; // the single writer's splice may be stale
    private int _contendedGroups; // lone groups still to pipeline since a writer last queued behind another

    public WriteThread(DbMutex mutex, int spinIterations, IWriteGroupWorker worker)
    {
        _mutex = mutex;
        _spinIterations = spinIterations;
        _worker = worker;
    }

    /// <summary>Holds the mutex. A pipelined group is still inserting into the memtables.</summary>
    public bool HasInflightInserts
    {
        get
        {
            _mutex.AssertHeld();
            return _inflightInserts > 0;
        }
    }

    /// <summary>An earlier group's memtable insert failed (holds the mutex).</summary>
    public bool InsertFailed
    {
        get
        {
            _mutex.AssertHeld();
            return _insertFailed;
        }
    }

    /// <summary>Holds the mutex. A memtable insert failed: later groups fail instead of publishing.</summary>
    public void MarkInsertFailed()
    {
        _mutex.AssertHeld();
        _insertFailed = true;
    }

    /// <summary>Holds the mutex. The last sequence number reserved for a group (published or not).</summary>
    public ulong LastAllocatedSequence
    {
        get
        {
            _mutex.AssertHeld();
            return _lastAllocatedSequence;
        }
    }

    /// <summary>Called once recovery has set the last sequence number, before any write.</summary>
    public void InitializeSequences(ulong lastSequence)
    {
        _lastAllocatedSequence = lastSequence;
        _orderCursor = lastSequence;
    }

    /// <summary>
    /// Holds the mutex, by an unbatched writer at the head of the queue with every earlier group
    /// done: sequence numbers up to <paramref name="lastSequence"/> were consumed outside any
    /// group (ingested files), so the next group starts after them.
    /// </summary>
    public void AdvanceSequences(ulong lastSequence)
    {
        _mutex.AssertHeld();
        if (lastSequence > _lastAllocatedSequence)
        {
            _lastAllocatedSequence = lastSequence;
            Volatile.Write(ref _orderCursor, lastSequence);
        }
    }

    /// <summary>Holds the mutex. Appends <paramref name="request"/>; true when it is the head (it leads).</summary>
    public bool Enqueue(WriteRequest request)
    {
        _mutex.AssertHeld();
        if (_tail == null)
        {
            _head = request;
        }
        else
        {
            _tail.Next = request;
            _contendedGroups = ContendedWindow; // another writer is active: pipeline lone groups for a while
        }
        _tail = request;
        return _head == request;
    }

    /// <summary>Holds the mutex. A group led by <paramref name="leader"/>, its first sequence the next unreserved one.</summary>
    public WriteGroup BeginGroup(WriteRequest leader)
    {
        _mutex.AssertHeld();
        WriteGroup group = _groupPool.Count > 0 ? _groupPool.Pop() : new WriteGroup();
        group.Members.Add(leader);
        group.FirstSequence = _lastAllocatedSequence + 1;
        return group;
    }

    /// <summary>
    /// Holds the mutex. Takes the writers behind the leader that may join its group (a batch, not
    /// Sync under a non-Sync leader, the same DisableWal, within the size limit), and reserves the
    /// group's sequence numbers. Returns the group's bytes.
    /// </summary>
    public long AddFollowers(WriteGroup group)
    {
        _mutex.AssertHeld();
        WriteRequest leader = group.Leader;
        long bytes = leader.Batch!.ApproximateSize;
        long limit = bytes <= 128 << 10 ? bytes + (128 << 10) : MaxGroupBytes;
        int count = leader.Batch.Count;
        for (WriteRequest? w = leader.Validator == null ? leader.Next : null; w != null; w = w.Next)
        {
            if (w.Batch == null || w.Validator != null || (w.Sync && !leader.Sync) || w.DisableWal != leader.DisableWal)
            {
                break;
            }
            long next = bytes + w.Batch.ApproximateSize;
            if (next > limit)
            {
                break;
            }
            bytes = next;
            group.Members.Add(w);
            count += w.Batch.Count;
        }
        group.Count = count;
        _lastAllocatedSequence += (ulong)count;
        return bytes;
    }

    /// <summary>
    /// Waits until <paramref name="request"/> is done (a leader committed it) or first in the queue
    /// (it must lead); returns true in the second case, with its group prepared. The waiter first
    /// spins on the request's state, inserting its own batch if the leader hands it over, and only
    /// then sleeps on the mutex: a sleep and wake-up per write would cost more than the write. No
    /// wake-up is lost: the decision to sleep is re-checked under the mutex, and leaders pulse
    /// under it whenever a sleeper is registered.
    /// </summary>
    public bool AwaitTurn(WriteRequest request, out WriteGroup group)
    {
        SpinUntilTurn(request);
        while (true)
        {
            using (_mutex.Lock())
            {
                bool assigned = false;
                while (!request.Done && _head != request)
                {
                    // No insert may be handed to a sleeper: stop taking them first. One handed
                    // over just before is done outside the lock, then the wait goes on.
                    if (request.StopTakingInserts() == WriteRequest.InsertAssigned)
                    {
                        assigned = true;
                        break;
                    }
                    _syncWaiters++;
                    try
                    {
                        _mutex.Wait();
                    }
                    finally
                    {
                        _syncWaiters--;
                    }
                }
                if (!assigned)
                {
                    if (request.Done)
                    {
                        group = null!;
                        return false;
                    }
                    group = _worker.PrepareGroup(request);
                    return true;
                }
            }
            _worker.InsertAssigned(request);
        }
    }

    /// <summary>
    /// Waiter, outside the mutex: spins until its request is done or first in the queue, inserting
    /// its batch when the leader assigns it, and stops taking work before it goes to sleep.
    /// </summary>
    private void SpinUntilTurn(WriteRequest request)
    {
        var spin = new SpinWait();
        int spins = 0;
        while (!request.Done && Volatile.Read(ref _head) != request)
        {
            int state = request.InsertState;
            if (state == WriteRequest.InsertAssigned)
            {
                _worker.InsertAssigned(request);
                spins = 0; // the leader finishes right after the members: worth spinning again
                continue;
            }
            if (spins++ >= _spinIterations)
            {
                if (request.StopTakingInserts() == WriteRequest.InsertAssigned)
                {
                    continue; // assigned just before: insert, then try again
                }
                return;
            }
            spin.SpinOnce(sleep1Threshold: -1);
        }
    }

    /// <summary>
    /// Hands a member's insert (its sequence already set) to its thread if that thread still
    /// spins; false leaves it to the leader (asynchronous requests have no thread).
    /// </summary>
    public static bool TryHandOutInsert(WriteGroup group, WriteRequest w)
    {
        if (w.Completion != null)
        {
            return false;
        }
        w.Group = group;
        group.AddPendingInsert();
        if (w.TryAssignInsert())
        {
            return true;
        }
        group.EndPendingInsert();
        return false;
    }

    /// <summary>
    /// Holds the mutex; the group's WAL record is written. With concurrent memtable writes allowed,
    /// a group pipelines (leaves the queue now, inserts concurrently) when a writer waits behind it,
    /// another group is still inserting, or a writer queued behind another within the last
    /// <see cref="ContendedWindow"/> lone groups; a lone group of several writers inserts concurrently
    /// but keeps the queue; a lone writer inserts alone with the single-writer skiplist path (the
    /// fastest, and what a single thread always gets), after dropping a splice that concurrent
    /// inserts made stale. Returns whether the insert is concurrent; <paramref name="asyncHead"/>
    /// receives an asynchronous head the pipelining exposed (the caller leads it).
    /// </summary>
    public bool ChooseInsertMode(WriteGroup group, ref WriteRequest? asyncHead)
    {
        _mutex.AssertHeld();
        bool contended = _contendedGroups > 0;
        if (contended)
        {
            _contendedGroups--;
        }
        if (group.Members[^1].Next != null || _inflightInserts > 0 || contended)
        {
            group.Pipelined = true;
            _inflightInserts++;
            asyncHead = PopGroup(group);
            _memTableHadConcurrentInserts = true;
            return true;
        }
        if (group.Members.Count > 1)
        {
            _memTableHadConcurrentInserts = true;
            return true;
        }
        UseSingleWriterInsert(group);
        return false;
    }

    /// <summary>
    /// By the queue's head, when no other group inserts and none can start: the group inserts
    /// with the single-writer path, whose splice concurrent inserts may have made stale.
    /// </summary>
    public void UseSingleWriterInsert(WriteGroup group)
    {
        if (_memTableHadConcurrentInserts)
        {
            foreach (ColumnFamilyData? cfd in group.Families)
            {
                cfd?.Mem.EndConcurrentWrites();
            }
            _memTableHadConcurrentInserts = false;
        }
    }

    /// <summary>
    /// Without the mutex, by the queue's head: true when the group is one writer, nobody waits
    /// behind it, no other group inserts and no writer queued recently. Stale reads err only
    /// towards false: a writer queued meanwhile waits for this group anyway, and a group counted in
    /// the in-flight inserts was counted before this one became head (under the mutex this leader
    /// took since); a stale contended count only picks the other, equally correct, insert path.
    /// </summary>
    public bool IsLoneGroup(WriteGroup group) =>
        group.Members.Count == 1 && group.Leader.Next == null && Volatile.Read(ref _inflightInserts) == 0
        && Volatile.Read(ref _contendedGroups) == 0;

    /// <summary>Outside the mutex: waits until every group before <paramref name="group"/> is done.</summary>
    public void AwaitTurnToPublish(WriteGroup group)
    {
        _mutex.AssertNotHeld();
        ulong previous = group.FirstSequence - 1;
        var spin = new SpinWait();
        while (Volatile.Read(ref _orderCursor) != previous)
        {
            spin.SpinOnce(sleep1Threshold: -1);
        }
    }

    /// <summary>Holds the mutex, which it releases while waiting: until no pipelined group is inserting into the memtables.</summary>
    public bool WaitForInflightInserts()
    {
        _mutex.AssertHeld();
        if (_inflightInserts == 0)
        {
            return false;
        }
        _inflightWaiters++;
        try
        {
            _mutex.Wait();
        }
        finally
        {
            _inflightWaiters--;
        }
        return true;
    }

    /// <summary>
    /// Holds the mutex; every earlier group is done and this one's sequence numbers are published
    /// (unless it failed). Moves the order cursor past the group, takes it out of the queue (or the
    /// in-flight count), completes its members and returns it to the pool. Returns the queue's new
    /// head when it is asynchronous and this call exposed it (the caller leads it).
    /// </summary>
    public WriteRequest? FinishGroup(WriteGroup group)
    {
        _mutex.AssertHeld();
        if (group.Count > 0)
        {
            Volatile.Write(ref _orderCursor, group.LastSequence);
        }
        WriteRequest? asyncHead = null;
        if (group.Pipelined)
        {
            if (--_inflightInserts == 0 && _inflightWaiters > 0)
            {
                _mutex.PulseAll();
            }
        }
        else
        {
            asyncHead = PopGroup(group);
        }
        foreach (WriteRequest w in group.Members)
        {
            Complete(w, group.Error);
        }
        if (_syncWaiters > 0)
        {
            _mutex.PulseAll();
        }
        group.Reset();
        _groupPool.Push(group);
        return asyncHead;
    }

    /// <summary>Holds the mutex (closing): fails every request still queued behind a leader that is gone.</summary>
    public void FailQueued(Exception error)
    {
        _mutex.AssertHeld();
        for (WriteRequest? w = _head; w != null; w = w.Next)
        {
            Complete(w, error);
        }
        _head = null;
        _tail = null;
    }

    public void Dispose()
    {
        foreach (WriteGroup group in _groupPool)
        {
            group.Dispose();
        }
        _groupPool.Clear();
    }

    /// <summary>Marks a request done with <paramref name="error"/> (null: success) and completes its task.</summary>
    public static void Complete(WriteRequest w, Exception? error)
    {
        w.Done = true;
        w.Error = error;
        if (w.Completion != null)
        {
            if (error != null)
            {
                w.Completion.TrySetException(ErrorHandler.Wrap(error));
            }
            else
            {
                w.Completion.TrySetResult();
            }
        }
    }

    /// <summary>
    /// Holds the mutex. Takes the group's members (the front of the queue) out of the queue.
    /// Returns the new head when it is asynchronous (the caller must lead it); wakes sleeping
    /// writers so a synchronous new head can lead.
    /// </summary>
    private WriteRequest? PopGroup(WriteGroup group)
    {
        _mutex.AssertHeld();
        // One store to the head: waiters read it without the lock, and a member must never see
        // itself at the head on the way.
        WriteRequest? head = null;
        foreach (WriteRequest w in group.Members)
        {
            head = w.Next;
            w.Next = null;
        }
        Volatile.Write(ref _head, head);
        if (_head == null)
        {
            _tail = null;
            return null;
        }
        if (_head.Completion != null)
        {
            return _head;
        }
        if (_syncWaiters > 0)
        {
            _mutex.PulseAll();
        }
        return null;
    }
}
