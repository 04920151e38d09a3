using KvEngine.Memtable;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Db;

/// <summary>
/// Memtable inserts of a commit group. A single-writer insert (the option off, or a lone writer
/// with nothing else inserting: ChooseInsertMode) has the leader insert every batch with the
/// single-writer skiplist path. A concurrent one (other groups may insert at the same time, or the
/// group has several writers) takes the concurrent path for every insert, and the members help (RocksDB's parallel memtable writes): the leader gives each member batch its first
/// sequence number and hands it to the member's thread if that thread is still spinning
/// (<see cref="WriteRequest.TryAssignInsert"/>: a compare-and-swap that loses to a waiter about to
/// sleep, whose batch the leader then inserts itself, as it does the batches of asynchronous
/// requests, which have no thread). The leader inserts its share and waits until every handed-out
/// insert has ended before the group may publish.
/// <para>
/// Invariants: a group's memtable does not switch while the group inserts (a switch waits for
/// _inflightInserts to drain); the group and each request's sequence are written before the
/// assigning compare-and-swap (a full fence) and read after it; a group's pending-insert count is
/// raised before an assignment and lowered by the member when its insert ends, error or not.
/// </para>
/// </summary>
internal sealed partial class DbImpl
{
    private long _memberInserts;

    /// <summary>Batches inserted by their own writer thread in a concurrent group (tests, diagnostics).</summary>
    internal long MemberInserts => Interlocked.Read(ref _memberInserts);

    /// <summary>Leader, outside _mutex: inserts the group's batches; a failure becomes the group's error and stops the database.</summary>
    private void InsertGroup(WriteGroup group, bool concurrent)
    {
        MemTable mem = group.MemTable!;
        try
        {
            int handedOut = 0;
            ulong sequence = group.FirstSequence;
            foreach (WriteRequest w in group.Members)
            {
                w.InsertSequence = sequence;
                sequence += (ulong)w.Batch!.Count;
                if (concurrent && w != group.Leader && TryHandOutInsert(group, w))
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
                    var inserter = new MemTableInserter(mem, w.InsertSequence, concurrent);
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
            lock (_mutex)
            {
                _memtableInsertFailed = true;
                SetBackgroundError(error, Diagnostics.BackgroundJobKind.MemTableInsert);
            }
        }
    }

    /// <summary>
    /// Hands a member's insert (its sequence already set) to its thread if that thread still
    /// spins; false leaves it to the leader (asynchronous requests have no thread).
    /// </summary>
    private static bool TryHandOutInsert(WriteGroup group, WriteRequest w)
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
    /// Waiter, outside _mutex: spins until its request is done or first in the queue, inserting
    /// its batch when the leader assigns it, and stops taking work before it goes to sleep.
    /// </summary>
    private void SpinUntilTurn(WriteRequest request)
    {
        var spin = new SpinWait();
        int spins = 0;
        while (!request.Done && Volatile.Read(ref _queueHead) != request)
        {
            int state = request.InsertState;
            if (state == WriteRequest.InsertAssigned)
            {
                InsertAssigned(request);
                spins = 0; // the leader finishes right after the members: worth spinning again
                continue;
            }
            if (spins++ >= _options.WriteThreadSpinIterations)
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

    /// <summary>Member: inserts its own batch at the sequence the leader gave it.</summary>
    private void InsertAssigned(WriteRequest request)
    {
        WriteGroup group = request.Group!;
        try
        {
            var inserter = new MemTableInserter(group.MemTable!, request.InsertSequence, concurrent: true);
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

    /// <summary>Applies a batch's records to a memtable with consecutive sequence numbers.</summary>
    internal struct MemTableInserter : Wal.IWriteBatchHandler
    {
        private readonly MemTable _mem;
        private readonly bool _concurrent;
        private readonly bool _refuseMerge;
        private ulong _sequence;

        /// <param name="mem">The memtable to insert into.</param>
        /// <param name="firstSequence">The sequence number of the batch's first record.</param>
        /// <param name="concurrent">Insert concurrently with other writers.</param>
        /// <param name="refuseMerge">Throw on a merge record (WAL replay without a merge operator).</param>
        public MemTableInserter(MemTable mem, ulong firstSequence, bool concurrent, bool refuseMerge = false)
        {
            _mem = mem;
            _sequence = firstSequence;
            _concurrent = concurrent;
            _refuseMerge = refuseMerge;
        }

        public void Put(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) => _mem.Add(_sequence++, ValueType.Value, key, value, _concurrent);

        public void Delete(ReadOnlySpan<byte> key) => _mem.Add(_sequence++, ValueType.Deletion, key, default, _concurrent);

        public void SingleDelete(ReadOnlySpan<byte> key) => _mem.Add(_sequence++, ValueType.SingleDeletion, key, default, _concurrent);

        public void DeleteRange(ReadOnlySpan<byte> beginKey, ReadOnlySpan<byte> endKey) =>
            _mem.Add(_sequence++, ValueType.RangeDeletion, beginKey, endKey, _concurrent);

        public void Merge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
        {
            if (_refuseMerge)
            {
                throw new KvException($"{KvEngine.Merge.MergeHelper.NotInitializedMessage} The log holds a merge operand; set ColumnFamilyOptions.MergeOperator.");
            }
            _mem.Add(_sequence++, ValueType.Merge, key, value, _concurrent);
        }

        public void SkipDroppedRecord() => _sequence++;
    }
}
