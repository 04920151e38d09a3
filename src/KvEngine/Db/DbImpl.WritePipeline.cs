namespace KvEngine.Db;

/// <summary>
/// The pipelined part of the write path (see DbImpl.Write.cs): choosing how a group inserts,
/// taking a group out of the writer queue, and publishing groups in sequence order.
/// </summary>
internal sealed partial class DbImpl
{
    // Guarded by _mutex: groups ready for reuse; the last sequence number reserved by a group;
    // pipelined groups out of the queue but not yet published, and writers waiting for none.
    private readonly Stack<WriteGroup> _groupPool = new();
    private ulong _lastAllocatedSequence;
    private int _inflightInserts;
    private int _inflightWaiters;

    // The last sequence number of the newest group done (published or failed), in order. Written
    // under _mutex, read without it by groups waiting for their turn to publish.
    private ulong _orderCursor;

    // An earlier group's memtable insert failed: later groups must not publish past its hole.
    private bool _memtableInsertFailed;

    // Concurrent inserts happened since the last single-writer insert, so the single writer's
    // splice may be stale. Written under _mutex, or by a lone group's leader (no other inserter).
    private bool _memTableHadConcurrentInserts;

    /// <summary>
    /// Holds _mutex; the group's WAL record is written. With concurrent memtable writes allowed, a
    /// group pipelines (leaves the queue now, inserts concurrently) when a writer waits behind it
    /// or another group is still inserting; a lone group of several writers inserts concurrently
    /// but keeps the queue; a lone writer inserts alone with the single-writer skiplist path (the
    /// fastest, and what a single thread always gets), after dropping a splice that concurrent
    /// inserts made stale. Returns whether the insert is concurrent; <paramref name="asyncHead"/>
    /// receives an asynchronous head the pipelining exposed (the caller leads it).
    /// </summary>
    private bool ChooseInsertMode(WriteGroup group, ref WriteRequest? asyncHead)
    {
        if (group.Members[^1].Next != null || _inflightInserts > 0)
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
    private void UseSingleWriterInsert(WriteGroup group)
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
    /// behind it and no other group inserts. Stale reads err only towards false: a writer queued
    /// meanwhile waits for this group anyway, and a group counted in _inflightInserts was counted
    /// before this one became head (under the mutex this leader took since).
    /// </summary>
    private bool IsLoneGroup(WriteGroup group) =>
        group.Members.Count == 1 && group.Leader.Next == null && Volatile.Read(ref _inflightInserts) == 0;

    /// <summary>Outside _mutex: waits until every group before <paramref name="group"/> is done.</summary>
    private void AwaitTurnToPublish(WriteGroup group)
    {
        ulong previous = group.FirstSequence - 1;
        var spin = new SpinWait();
        while (Volatile.Read(ref _orderCursor) != previous)
        {
            spin.SpinOnce(sleep1Threshold: -1);
        }
    }

    /// <summary>
    /// Holds _mutex; every earlier group is done. Publishes the group's sequence numbers (unless
    /// it failed), completes its members and returns the group to the pool. Returns the queue's
    /// new head when it is asynchronous and this call exposed it (the caller leads it).
    /// </summary>
    private WriteRequest? PublishGroup(WriteGroup group)
    {
        if (group.Error == null && _memtableInsertFailed && group.Count > 0)
        {
            group.Error = new KvException("The write was not applied: an earlier write failed to reach the memtable.");
        }
        if (group.Count > 0)
        {
            if (group.Error == null)
            {
                _versions.SetLastSequence(group.LastSequence);
                if (group.Leader.DisableWal)
                {
                    MarkUnpersisted(group);
                }
            }
            Volatile.Write(ref _orderCursor, group.LastSequence);
        }
        WriteRequest? asyncHead = null;
        if (group.Pipelined)
        {
            if (--_inflightInserts == 0 && _inflightWaiters > 0)
            {
                Monitor.PulseAll(_mutex);
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
            Monitor.PulseAll(_mutex);
        }
        group.Reset();
        _groupPool.Push(group);
        return asyncHead;
    }

    /// <summary>Holds _mutex. The families the group's batches wrote now hold data no WAL has.</summary>
    private static void MarkUnpersisted(WriteGroup group)
    {
        foreach (WriteRequest w in group.Members)
        {
            if (w.Batch!.OtherColumnFamilies is { } ids)
            {
                foreach (uint id in ids)
                {
                    if (id < (uint)group.Families.Length && group.Families[id] is { } cfd)
                    {
                        cfd.HasUnpersistedWrites = true;
                    }
                }
            }
            if (w.Batch.WritesDefaultColumnFamily && group.Families[0] is { } defaultFamily)
            {
                defaultFamily.HasUnpersistedWrites = true;
            }
        }
    }

    /// <summary>
    /// Holds _mutex. Takes the group's members (the front of the queue) out of the queue. Returns
    /// the new head when it is asynchronous (the caller must lead it); wakes sleeping writers so a
    /// synchronous new head can lead.
    /// </summary>
    private WriteRequest? PopGroup(WriteGroup group)
    {
        // One store to the head: waiters read it without the lock, and a member must never see
        // itself at the head on the way.
        WriteRequest? head = null;
        foreach (WriteRequest w in group.Members)
        {
            head = w.Next;
            w.Next = null;
        }
        Volatile.Write(ref _queueHead, head);
        if (_queueHead == null)
        {
            _queueTail = null;
            return null;
        }
        if (_queueHead.Completion != null)
        {
            return _queueHead;
        }
        if (_syncWaiters > 0)
        {
            Monitor.PulseAll(_mutex);
        }
        return null;
    }
}
