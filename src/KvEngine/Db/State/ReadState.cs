using KvEngine.Memtable;
using KvEngine.Versions;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Db.State;

/// <summary>
/// What one read sees: the mutable memtable, the immutable ones (newest first) and the table
/// version (RocksDB's SuperVersion). Immutable; published by the database through a volatile
/// field and replaced on every memtable switch, flush or compaction.
/// <para>
/// Readers pin it with <see cref="TryRef"/> (a CAS that fails once the count reached zero, so a
/// retired state is never revived) and release it with <see cref="Unref"/>; the last release drops
/// the references it holds on memtables and version, then its reference on the database's
/// <see cref="NativeLifetime"/> (table readers, block cache), so nothing a reader reaches through
/// a pinned state is freed, even by a close. No lock on the read path.
/// </para>
/// <para>
/// <see cref="Closed"/> is what a closed family publishes: it can never be pinned (no reference),
/// so a read that finds it throws <see cref="ObjectDisposedException"/>
/// (<see cref="ColumnFamilyData.AcquireReadState"/>) instead of retrying.
/// </para>
/// </summary>
internal sealed class ReadState
{
    private readonly NativeLifetime? _lifetime;
    private int _refs = 1;

    public ReadState(MemTable mem, MemTable[] immutableNewestFirst, Version version, NativeLifetime? lifetime = null)
    {
        Mem = mem;
        Immutable = immutableNewestFirst;
        Version = version;
        lifetime?.Ref();
        _lifetime = lifetime;
        mem.Ref();
        foreach (MemTable m in immutableNewestFirst)
        {
            m.Ref();
        }
        version.Ref();
    }

    private ReadState()
    {
        Mem = null!;
        Immutable = [];
        Version = null!;
        _refs = 0;
    }

    /// <summary>The state of a closed family: never pinned (<see cref="TryRef"/> always fails), never released.</summary>
    public static ReadState Closed { get; } = new();

    public MemTable Mem { get; }

    public MemTable[] Immutable { get; }

    public Version Version { get; }

    /// <summary>
    /// Level-0 misses after which a read-triggered compaction is requested (computed when the state
    /// is published: <see cref="Compaction.Level0ReadCharges.Budget"/>); <see cref="long.MaxValue"/> for none.
    /// </summary>
    public long Level0ReadBudget { get; init; } = long.MaxValue;

    public bool TryRef()
    {
        while (true)
        {
            int r = Volatile.Read(ref _refs);
            if (r <= 0)
            {
                return false;
            }
            if (Interlocked.CompareExchange(ref _refs, r + 1, r) == r)
            {
                return true;
            }
        }
    }

    public void Unref()
    {
        int r = Interlocked.Decrement(ref _refs);
        if (r != 0)
        {
            if (r < 0)
            {
                throw new InvalidOperationException("ReadState released more often than referenced.");
            }
            return;
        }
        Mem.Unref();
        foreach (MemTable m in Immutable)
        {
            m.Unref();
        }
        Version.Unref();
        _lifetime?.Unref(); // last: the memtables and version above are released first
    }
}
