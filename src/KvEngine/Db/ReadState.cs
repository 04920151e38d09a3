using KvEngine.Memtable;
using KvEngine.Versions;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Db;

/// <summary>
/// What one read sees: the mutable memtable, the immutable ones (newest first) and the table
/// version (RocksDB's SuperVersion). Immutable; published by the database through a volatile
/// field and replaced on every memtable switch, flush or compaction.
/// <para>
/// Readers pin it with <see cref="TryRef"/> (a CAS that fails once the count reached zero, so a
/// retired state is never revived) and release it with <see cref="Unref"/>; the last release drops
/// the references it holds on memtables and version. No lock on the read path.
/// </para>
/// </summary>
internal sealed class ReadState
{
    private int _refs = 1;

    public ReadState(MemTable mem, MemTable[] immutableNewestFirst, Version version)
    {
        Mem = mem;
        Immutable = immutableNewestFirst;
        Version = version;
        mem.Ref();
        foreach (MemTable m in immutableNewestFirst)
        {
            m.Ref();
        }
        version.Ref();
    }

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
    }
}
