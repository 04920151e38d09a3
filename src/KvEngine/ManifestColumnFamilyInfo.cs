namespace KvEngine;

/// <summary>One column family's state at the end of a MANIFEST (see <see cref="ManifestInfo"/>). Immutable.</summary>
public sealed class ManifestColumnFamilyInfo
{
    internal ManifestColumnFamilyInfo(uint id, string name, ulong logNumber, string comparatorName, IReadOnlyList<IReadOnlyList<ManifestTableInfo>> levels)
    {
        Id = id;
        Name = name;
        LogNumber = logNumber;
        ComparatorName = comparatorName;
        Levels = levels;
    }

    /// <summary>The family's id (0 for "default").</summary>
    public uint Id { get; }

    /// <summary>The family's name.</summary>
    public string Name { get; }

    /// <summary>The oldest WAL that may hold the family's unflushed writes.</summary>
    public ulong LogNumber { get; }

    /// <summary>The comparator the MANIFEST names for the family; empty when it names none.</summary>
    public string ComparatorName { get; }

    /// <summary>
    /// The live tables of each level, 0 to 6: level 0 newest first (the order reads consult it),
    /// deeper levels by key.
    /// </summary>
    public IReadOnlyList<IReadOnlyList<ManifestTableInfo>> Levels { get; }
}
