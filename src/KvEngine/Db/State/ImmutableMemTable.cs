using KvEngine.Memtable;

namespace KvEngine.Db.State;

/// <summary>
/// A memtable waiting to be flushed, with the number of the WAL started when it was switched
/// out: once it is in a table, logs numbered below <see cref="NextLogNumber"/> hold nothing
/// unflushed (it is always the oldest memtable that is flushed). <see cref="Flushed"/> completes
/// when its table is recorded in the MANIFEST (or faults with the flush's error).
/// </summary>
internal sealed class ImmutableMemTable
{
    public ImmutableMemTable(MemTable mem, ulong nextLogNumber)
    {
        Mem = mem;
        NextLogNumber = nextLogNumber;
    }

    public MemTable Mem { get; }

    public ulong NextLogNumber { get; }

    /// <summary>Completed when the memtable is in a table; failed by a background error.</summary>
    public TaskCompletionSource Flushed { get; private set; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>After a background error failed it, a fresh one for the retried flush (by the resume, under the database mutex it checks).</summary>
    public void RenewFlushedIfFailed()
    {
        if (Flushed.Task.IsFaulted)
        {
            Flushed = new(TaskCreationOptions.RunContinuationsAsynchronously);
        }
    }
}
