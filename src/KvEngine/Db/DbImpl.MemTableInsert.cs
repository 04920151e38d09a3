using KvEngine.Memtable;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Db;

/// <summary>
/// Memtable inserts of a commit group. With <see cref="KvOptions.AllowConcurrentMemtableWrite"/>
/// and more than one request in the group, the members insert their own batches at the same time
/// (RocksDB's parallel memtable writes): after the group's WAL record is written, the leader gives
/// each member batch its first sequence number and hands it to the member's thread if that thread
/// is still spinning (<see cref="WriteRequest.TryAssignInsert"/>: a compare-and-swap that loses to
/// a waiter about to sleep, whose batch the leader then inserts itself, as it does the batches of
/// asynchronous requests, which have no thread). The leader inserts its share, waits until every
/// handed-out insert is done, closes the memtable's concurrent phase, and only then publishes the
/// group's sequence numbers (FinishGroup), so readers never see part of a group.
/// <para>
/// Invariants: the memtable cannot switch during a group (switches happen in PrepareGroup, by the
/// leader); <see cref="_groupMemTable"/> and each request's sequence are written before the
/// assigning compare-and-swap (a full fence) and read after it; <see cref="_pendingInserts"/> is
/// raised before an assignment and lowered by the member when its insert ends, with or without an
/// error.
/// </para>
/// </summary>
internal sealed partial class DbImpl
{
    private MemTable? _groupMemTable;
    private int _pendingInserts;
    private long _memberInserts;

    /// <summary>Batches inserted by their own writer thread in a concurrent group (tests, diagnostics).</summary>
    internal long MemberInserts => Interlocked.Read(ref _memberInserts);

    /// <summary>Leader, outside _mutex: inserts the prepared group's batches with its members' help.</summary>
    private void InsertGroupConcurrently()
    {
        MemTable mem = _mem;
        _groupMemTable = mem;
        ulong sequence = _groupFirstSequence + (ulong)_group[0].Batch!.Count;
        for (int i = 1; i < _group.Count; i++)
        {
            WriteRequest w = _group[i];
            w.InsertSequence = sequence;
            sequence += (ulong)w.Batch!.Count;
            if (w.Completion == null)
            {
                Interlocked.Increment(ref _pendingInserts);
                if (w.TryAssignInsert())
                {
                    continue;
                }
                Interlocked.Decrement(ref _pendingInserts);
            }
            w.LeaderInserts = true;
        }
        try
        {
            var own = new MemTableInserter(mem, _groupFirstSequence, concurrent: true);
            _group[0].Batch!.Iterate(ref own);
            for (int i = 1; i < _group.Count; i++)
            {
                WriteRequest w = _group[i];
                if (w.LeaderInserts)
                {
                    var inserter = new MemTableInserter(mem, w.InsertSequence, concurrent: true);
                    w.Batch!.Iterate(ref inserter);
                }
            }
        }
        finally
        {
            var spin = new SpinWait();
            while (Volatile.Read(ref _pendingInserts) != 0)
            {
                spin.SpinOnce(sleep1Threshold: -1);
            }
            mem.EndConcurrentWrites();
            _groupMemTable = null;
        }
        Exception? memberError = Volatile.Read(ref _memberInsertError);
        if (memberError != null)
        {
            _memberInsertError = null;
            throw memberError; // ExecuteGroup records it as the group's error
        }
    }

    private Exception? _memberInsertError;

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
        try
        {
            var inserter = new MemTableInserter(_groupMemTable!, request.InsertSequence, concurrent: true);
            request.Batch!.Iterate(ref inserter);
        }
        catch (Exception e)
        {
            Interlocked.CompareExchange(ref _memberInsertError, e, null);
        }
        finally
        {
            request.MarkInserted();
            Interlocked.Increment(ref _memberInserts);
            Interlocked.Decrement(ref _pendingInserts);
        }
    }

    /// <summary>Applies a batch's records to a memtable with consecutive sequence numbers.</summary>
    internal struct MemTableInserter : Wal.IWriteBatchHandler
    {
        private readonly MemTable _mem;
        private readonly bool _concurrent;
        private ulong _sequence;

        public MemTableInserter(MemTable mem, ulong firstSequence, bool concurrent)
        {
            _mem = mem;
            _sequence = firstSequence;
            _concurrent = concurrent;
        }

        public void Put(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) => _mem.Add(_sequence++, ValueType.Value, key, value, _concurrent);

        public void Delete(ReadOnlySpan<byte> key) => _mem.Add(_sequence++, ValueType.Deletion, key, default, _concurrent);

        public void SingleDelete(ReadOnlySpan<byte> key) => _mem.Add(_sequence++, ValueType.SingleDeletion, key, default, _concurrent);

        public void DeleteRange(ReadOnlySpan<byte> beginKey, ReadOnlySpan<byte> endKey) =>
            throw new KvException("This log holds a range deletion (DeleteRange); KvEngine does not read range deletions yet.");

        public void Merge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) =>
            throw new KvException("This log holds a merge operand; KvEngine has no merge operator.");

        public void SkipDroppedRecord() => _sequence++;
    }
}
