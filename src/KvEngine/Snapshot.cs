namespace KvEngine;

/// <summary>
/// A consistent read point: reads through it see the database as it was when it was taken.
/// Dispose it when done, so that compaction may drop versions it kept. Thread-safe. A snapshot that
/// outlives its database: reads through it throw <see cref="ObjectDisposedException"/> (the
/// database is closed), and its Dispose does nothing harmful.
/// </summary>
public sealed class Snapshot : IDisposable
{
    private readonly Db.State.SnapshotList _owner;
    private int _released;

    internal Snapshot(Db.State.SnapshotList owner, ulong sequence)
    {
        _owner = owner;
        Sequence = sequence;
    }

    /// <summary>The sequence number this snapshot reads at.</summary>
    public ulong Sequence { get; }

    internal Snapshot? Previous { get; set; }

    internal Snapshot? Next { get; set; }

    internal bool IsReleased => Volatile.Read(ref _released) != 0;

    internal bool BelongsTo(Db.State.SnapshotList list) => ReferenceEquals(_owner, list);

    /// <summary>Releases the snapshot (RocksDB's ReleaseSnapshot); reads through it then throw. Idempotent.</summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _released, 1) == 0)
        {
            _owner.Remove(this);
        }
    }
}
