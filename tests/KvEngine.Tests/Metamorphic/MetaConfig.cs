namespace KvEngine.Tests.Metamorphic;

/// <summary>
/// One configuration a metamorphic op log runs under: options for every column family, database
/// options, a block cache, where the files live, and whether the families keep their own
/// keyspaces. Immutable (the delegates build fresh objects for each run).
/// </summary>
internal sealed class MetaConfig
{
    public required string Name { get; init; }

    /// <summary>Applied to the options of every family, the default one included.</summary>
    public Action<ColumnFamilyOptions>? Family { get; init; }

    /// <summary>Applied to the database options after <see cref="Family"/>.</summary>
    public Action<KvOptions>? Db { get; init; }

    /// <summary>A block cache for every family (disposed after the run); null: the database's own.</summary>
    public Func<KvBlockCache>? Cache { get; init; }

    /// <summary>On the local file system in a temporary directory (else the in-memory file system).</summary>
    public bool OnDisk { get; init; }

    /// <summary>
    /// Every family of the op log lives in the default family under a one-byte key prefix ('0' +
    /// family): reads, iterators (bounded to the prefix), range deletions, compactions and ingested
    /// files are translated, so the results must be those of separate families.
    /// </summary>
    public bool SingleKeyspace { get; init; }

    /// <summary>Test-only sabotage: called with each write record; true drops it (proves a divergence is caught).</summary>
    public Func<MetaOp, bool>? DropWrite { get; init; }

    public override string ToString() => Name;
}
