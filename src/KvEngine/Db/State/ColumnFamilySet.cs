using KvEngine.Db.State;
using KvEngine.Versions;

namespace KvEngine.Db.State;

/// <summary>
/// The engine's column families (RocksDB's ColumnFamilySet): the family table by id, the default
/// family, and the dropped families not yet closed.
/// <para>
/// Invariants: <see cref="ById"/> (index = id, null for a dropped or unused id) always holds the
/// default family at index 0 and is replaced, never changed, so writers and readers use it without
/// a lock (a write group keeps the table it was prepared with); a dropped family leaves the table
/// and joins <see cref="All"/>'s tail until the database closes.
/// </para>
/// <para>
/// Thread-safety: <see cref="ById"/> and <see cref="Live"/> are lock-free; every other member is
/// called with the database mutex held, or at open and close when nothing else runs.
/// </para>
/// </summary>
internal sealed class ColumnFamilySet
{
    private readonly DbMutex _mutex;
    private readonly List<ColumnFamilyData> _dropped = new();
    private ColumnFamilyData?[] _byId;

    public ColumnFamilySet(DbMutex mutex, ColumnFamilyData defaultFamily)
    {
        _mutex = mutex;
        Default = defaultFamily;
        _byId = [defaultFamily];
    }

    /// <summary>The default family (never dropped).</summary>
    public ColumnFamilyData Default { get; }

    /// <summary>The live families by id (null: dropped or unused), read lock-free; never changed once published.</summary>
    public ColumnFamilyData?[] ById => Volatile.Read(ref _byId);

    /// <summary>The live families in id order (a copy), read lock-free.</summary>
    public List<ColumnFamilyData> Live()
    {
        ColumnFamilyData?[] byId = ById;
        var result = new List<ColumnFamilyData>(byId.Length);
        foreach (ColumnFamilyData? cfd in byId)
        {
            if (cfd != null)
            {
                result.Add(cfd);
            }
        }
        return result;
    }

    /// <summary>The live families, then the dropped ones not yet closed (a copy). Holds the mutex or runs at open/close.</summary>
    public List<ColumnFamilyData> All()
    {
        List<ColumnFamilyData> result = Live();
        result.AddRange(_dropped);
        return result;
    }

    /// <summary>Replaces the family table with <paramref name="families"/>. Holds the mutex or runs at open.</summary>
    public void Publish(List<ColumnFamilyData> families)
    {
        uint max = 0;
        foreach (ColumnFamilyData cfd in families)
        {
            max = Math.Max(max, cfd.Id);
        }
        var byId = new ColumnFamilyData?[max + 1];
        foreach (ColumnFamilyData cfd in families)
        {
            byId[cfd.Id] = cfd;
        }
        Volatile.Write(ref _byId, byId);
    }

    /// <summary>Adds a new family to the table. Holds the mutex.</summary>
    public void Add(ColumnFamilyData cfd)
    {
        _mutex.AssertHeld();
        List<ColumnFamilyData> all = Live();
        all.Add(cfd);
        Publish(all);
    }

    /// <summary>Takes a dropped family out of the table; it stays in <see cref="All"/> until close. Holds the mutex.</summary>
    public void Remove(ColumnFamilyData cfd)
    {
        _mutex.AssertHeld();
        ColumnFamilyData?[] next = (ColumnFamilyData?[])ById.Clone();
        next[cfd.Id] = null;
        Volatile.Write(ref _byId, next);
        _dropped.Add(cfd);
    }

    /// <summary>Holds the mutex. A flush of some family (live or dropped) runs.</summary>
    public bool AnyFlushRunning()
    {
        _mutex.AssertHeld();
        foreach (ColumnFamilyData cfd in All())
        {
            if (cfd.FlushRunning)
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>
    /// With several live families, the edit that records MinLogNumberToKeep after
    /// <paramref name="familyEdits"/>: the smallest log number any live family will have once they
    /// apply (families' in-memory log numbers included); null with one family, whose own log
    /// number says the same.
    /// </summary>
    public VersionEdit? MinLogNumberToKeepEdit(List<VersionEdit> familyEdits)
    {
        List<ColumnFamilyData> live = Live();
        if (live.Count < 2)
        {
            return null;
        }
        ulong min = ulong.MaxValue;
        foreach (ColumnFamilyData cfd in live)
        {
            ulong log = cfd.Versions.LogNumber;
            foreach (VersionEdit e in familyEdits)
            {
                if (e.ColumnFamily == cfd.Id && e.HasLogNumber)
                {
                    log = Math.Max(log, e.LogNumber);
                }
            }
            min = Math.Min(min, log);
        }
        return new VersionEdit { MinLogNumberToKeep = min };
    }
}
