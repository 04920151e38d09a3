namespace KvEngine.Replication;

/// <summary>
/// Handed to DotNext as a replicated entry's context on the node that appends it: the state
/// machine records there why it refused the entry (a batch the database rejects is skipped on
/// every node alike), so the writer learns it. Written by the applier before the entry counts as
/// applied, read by the writer after; DotNext's apply wait orders the two.
/// </summary>
internal sealed class ApplyOutcome
{
    public Exception? Error { get; set; }
}
