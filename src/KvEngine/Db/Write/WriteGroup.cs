using KvEngine.Db.State;

namespace KvEngine.Db.Write;

/// <summary>
/// One commit group on its way through the write path (<see cref="DbWriter"/>): the requests it
/// commits, the leader first; their WAL record when there are several; the sequence numbers given
/// to it; the column families it inserts into; and the hand-off state of its members' concurrent
/// inserts.
/// <para>
/// Ownership: the <see cref="WriteThread"/> keeps a pool of groups under the database mutex. A
/// leader takes one in PrepareGroup and owns it until the group is published, when it goes back
/// to the pool. Members read
/// <see cref="Families"/> (and their own request's sequence) only after the leader's assigning
/// compare-and-swap, which orders the leader's writes before their reads.
/// </para>
/// </summary>
internal sealed class WriteGroup : IDisposable
{
    private int _pendingInserts;
    private Exception? _memberInsertError;

    public List<WriteRequest> Members { get; } = new();

    /// <summary>The members' batches appended into one, for the WAL record of a group of several.</summary>
    public WriteBatch CombinedBatch { get; } = new();

    public WriteRequest Leader => Members[0];

    /// <summary>The first of the <see cref="Count"/> sequence numbers reserved for the group.</summary>
    public ulong FirstSequence { get; set; }

    /// <summary>Records in the group's batches: the sequence numbers it takes.</summary>
    public int Count { get; set; }

    public ulong LastSequence => FirstSequence + (ulong)Count - 1;

    /// <summary>Why the group failed (it then publishes nothing); null while it is fine.</summary>
    public Exception? Error { get; set; }

    /// <summary>The column families by id as PrepareGroup saw them (their mutable memtables do not switch while the group inserts).</summary>
    public ColumnFamilyData?[] Families { get; set; } = Array.Empty<ColumnFamilyData?>();

    /// <summary>Left the writer queue before its memtable insert, so later groups overlap it.</summary>
    public bool Pipelined { get; set; }

    /// <summary>Leader: one member insert is about to be handed out.</summary>
    public void AddPendingInsert() => Interlocked.Increment(ref _pendingInserts);

    /// <summary>Member or leader: one handed-out insert ended (or was taken back).</summary>
    public void EndPendingInsert() => Interlocked.Decrement(ref _pendingInserts);

    public bool HasPendingInserts => Volatile.Read(ref _pendingInserts) != 0;

    /// <summary>Member: records the first failure of a member insert.</summary>
    public void SetMemberInsertError(Exception e) => Interlocked.CompareExchange(ref _memberInsertError, e, null);

    /// <summary>Leader, after every member insert ended: the first member failure, cleared.</summary>
    public Exception? TakeMemberInsertError() => Interlocked.Exchange(ref _memberInsertError, null);

    /// <summary>Back to the state of a pooled group (references to callers' batches dropped).</summary>
    public void Reset()
    {
        Members.Clear();
        CombinedBatch.Clear();
        FirstSequence = 0;
        Count = 0;
        Error = null;
        Families = Array.Empty<ColumnFamilyData?>();
        Pipelined = false;
        _pendingInserts = 0;
        _memberInsertError = null;
    }

    public void Dispose() => CombinedBatch.Dispose();
}
