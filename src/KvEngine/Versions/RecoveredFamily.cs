namespace KvEngine.Versions;

/// <summary>A live column family as a MANIFEST replay found it (see <see cref="ManifestReader"/>). Not thread-safe.</summary>
internal sealed class RecoveredFamily
{
    public RecoveredFamily(uint id, string name)
    {
        Id = id;
        Name = name;
    }

    public uint Id { get; }

    public string Name { get; }

    /// <summary>The family's files and compact cursors, edit by edit.</summary>
    public VersionBuilder Builder { get; } = new(Version.Empty(null));

    /// <summary>The family's last recorded log number (0 when none was).</summary>
    public ulong LogNumber { get; set; }

    public bool HasLogNumber { get; set; }

    public bool SawComparator { get; set; }
}
