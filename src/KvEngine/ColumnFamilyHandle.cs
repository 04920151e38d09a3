using KvEngine.Db;

namespace KvEngine;

/// <summary>
/// A column family of an open database (RocksDB's ColumnFamilyHandle): pass it to the
/// <see cref="KvDb"/> and <see cref="WriteBatch"/> methods that take one. Handles come from
/// <see cref="KvDb.Open(string, KvOptions, IEnumerable{ColumnFamilyDescriptor})"/>,
/// <see cref="KvDb.CreateColumnFamily"/>, <see cref="KvDb.GetColumnFamily"/> and
/// <see cref="KvDb.DefaultColumnFamily"/>, and are valid until the database closes. After
/// <see cref="KvDb.DropColumnFamily"/> reads and writes through the handle throw
/// <see cref="ArgumentException"/>; iterators and snapshots taken before the drop keep working.
/// Thread-safe.
/// </summary>
public sealed class ColumnFamilyHandle
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

    /// <inheritdoc/>
    public override string ToString() => Name;
}
