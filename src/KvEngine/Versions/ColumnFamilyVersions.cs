namespace KvEngine.Versions;

/// <summary>
/// One column family as the <see cref="VersionSet"/> records it: id, name, current
/// <see cref="Version"/> and log number (WALs numbered below it hold nothing of this family that
/// is not in its tables). RocksDB keeps these in its ColumnFamilyData; here they are the version
/// set's part of a family, and <c>ColumnFamilyData</c> holds the rest (memtables, options, read
/// state).
/// <para>
/// Thread-safety: <see cref="Current"/> is read lock-free by anyone; every change happens under the
/// version set's lock. <see cref="LogNumber"/> may run ahead of what the MANIFEST holds: a family
/// whose memtable is empty at a WAL switch takes the new WAL's number in memory only (RocksDB does
/// the same), so an idle family pins no WAL; the next flush records it as MinLogNumberToKeep.
/// </para>
/// </summary>
internal sealed class ColumnFamilyVersions
{
    private Version _current;

    public ColumnFamilyVersions(uint id, string name, Version current, ulong logNumber)
    {
        Id = id;
        Name = name;
        _current = current;
        LogNumber = logNumber;
        RecordedLogNumber = logNumber;
    }

    /// <summary>The default family's id and name (RocksDB's kDefaultColumnFamilyName).</summary>
    public const uint DefaultId = 0;

    /// <summary>"default".</summary>
    public const string DefaultName = "default";

    public uint Id { get; }

    public string Name { get; }

    /// <summary>The family's newest version (its own reference is held until it is replaced).</summary>
    public Version Current => Volatile.Read(ref _current);

    /// <summary>WALs below this hold no data of this family that is missing from its tables.</summary>
    public ulong LogNumber { get; internal set; }

    /// <summary>
    /// The log number the MANIFEST holds for this family: <see cref="LogNumber"/> without the
    /// in-memory advances of an idle family. What a recovery of the MANIFEST as written so far sees.
    /// </summary>
    public ulong RecordedLogNumber { get; internal set; }

    /// <summary>Set once the drop is in the MANIFEST; the family takes no more edits.</summary>
    public bool IsDropped { get; internal set; }

    /// <summary>Under the version set's lock: makes <paramref name="v"/> current; returns the old version (the caller releases it).</summary>
    internal Version Exchange(Version v) => Interlocked.Exchange(ref _current, v);
}
