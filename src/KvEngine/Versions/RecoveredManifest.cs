namespace KvEngine.Versions;

/// <summary>
/// What a MANIFEST replay found (see <see cref="ManifestReader"/>): the live column families in id
/// order, the database-wide counters, and where the replay stopped. Not thread-safe.
/// </summary>
internal sealed class RecoveredManifest
{
    public required ulong ManifestNumber { get; init; }

    /// <summary>Live families by id; the default family (0) is always there.</summary>
    public required SortedDictionary<uint, RecoveredFamily> Families { get; init; }

    public required ulong NextFileNumber { get; init; }

    public required ulong LastSequence { get; init; }

    public required ulong PrevLogNumber { get; init; }

    /// <summary>The largest MinLogNumberToKeep recorded (0 when none was: a one-family database).</summary>
    public required ulong MinLogNumberToKeep { get; init; }

    /// <summary>The largest column family id ever used (ids are never reused).</summary>
    public required uint MaxColumnFamily { get; init; }

    /// <summary>Tables an applied edit deleted, or that belonged to a family an applied edit dropped.</summary>
    public required HashSet<ulong> RetiredTables { get; init; }

    /// <summary>With best-efforts recovery, what was wrong with the record the replay stopped at; otherwise null.</summary>
    public string? Damage { get; init; }

    /// <summary>The MANIFEST's length up to the end of the last record applied (what a copy of this state needs).</summary>
    public long AppliedLength { get; init; }
}
