using KvEngine.Diagnostics;

namespace KvEngine.Db.Write;

/// <summary>
/// One write group's stall while it makes room (<see cref="MemTableSwitcher.MakeRoom"/>): when its
/// first wait began and why (zero while it has not waited). Reported once, as one write stall,
/// when the group goes on. A local of the making-room call; not shared between threads.
/// </summary>
internal struct WriteStall
{
    /// <summary><see cref="System.Diagnostics.Stopwatch"/> timestamp of the first wait; 0 before it.</summary>
    public long Started;

    /// <summary>The cause of the first wait.</summary>
    public WriteStallCause Cause;
}
