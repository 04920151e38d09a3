using KvEngine.Db;
using KvEngine.Db.State;

namespace KvEngine;

/// <summary>
/// A column family of an open database (RocksDB's ColumnFamilyHandle): pass it to the
/// <see cref="KvDb"/> and <see cref="WriteBatch"/> methods that take one. Handles come from
/// <see cref="KvDb.Open(string, KvOptions, IEnumerable{ColumnFamilyDescriptor})"/>,
/// <see cref="KvDb.CreateColumnFamily"/>, <see cref="KvDb.GetColumnFamily"/> and
/// <see cref="KvDb.DefaultColumnFamily"/>, and are valid until the database closes (one handle
/// per family: every call returns the same object).
/// <para>
/// After <see cref="KvDb.DropColumnFamily"/>, as in RocksDB, the handle keeps serving reads of the
/// family's last state — Get, TryGet, MultiGet, KeyMayExist and new iterators — until it is
/// disposed (RocksDB's DestroyColumnFamilyHandle) or the database closes; the family's memtables
/// and tables stay until then. Writes, flushes, compactions and properties through it throw
/// <see cref="ArgumentException"/> at once. Iterators taken before the drop or the dispose keep
/// working. <see cref="Dispose"/> does nothing for a live family (its handle stays valid).
/// </para>
/// Thread-safe.
/// </summary>
public sealed class ColumnFamilyHandle : IDisposable
{
    internal ColumnFamilyHandle(ColumnFamilyData data, object owner)
    {
        Data = data;
        Owner = owner;
    }

    /// <summary>The family's name ("default" for the default family).</summary>
    public string Name => Data.Name;

    /// <summary>The family's id in the database's files (0 for the default family; never reused).</summary>
    public uint Id => Data.Id;

    /// <summary>True once the family was dropped.</summary>
    public bool IsDropped => Data.Versions.IsDropped;

    internal ColumnFamilyData Data { get; }

    /// <summary>The database engine the handle belongs to.</summary>
    internal object Owner { get; }

    /// <summary>
    /// Releases what a dropped family kept for reads through this handle: reads through it then
    /// throw <see cref="ArgumentException"/>, and its memtables and tables go once no iterator
    /// pins them. Nothing for a live family, or once the database is closed. Idempotent.
    /// </summary>
    public void Dispose()
    {
        if (Owner is DbImpl db)
        {
            db.ReleaseHandle(Data);
        }
    }

    /// <inheritdoc/>
    public override string ToString() => Name;
}
