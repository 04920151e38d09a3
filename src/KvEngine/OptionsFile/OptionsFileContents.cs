namespace KvEngine.OptionsFile;

/// <summary>
/// A parsed OPTIONS file: the database-wide options (with the default family's settings left at
/// their defaults in <see cref="DbOptions"/>), and each family's options in file order, "default"
/// first (the parser guarantees it). Not thread-safe: the option instances are mutable.
/// </summary>
internal sealed class OptionsFileContents
{
    public OptionsFileContents(string rocksDbVersion, KvOptions dbOptions, IReadOnlyList<NamedColumnFamilyOptions> families)
    {
        RocksDbVersion = rocksDbVersion;
        DbOptions = dbOptions;
        Families = families;
    }

    /// <summary>The [Version] section's rocksdb_version ("" when the file had none).</summary>
    public string RocksDbVersion { get; }

    /// <summary>The [DBOptions] section mapped onto a <see cref="KvOptions"/>.</summary>
    public KvOptions DbOptions { get; }

    /// <summary>Every [CFOptions] section with its table options, "default" first.</summary>
    public IReadOnlyList<NamedColumnFamilyOptions> Families { get; }

    /// <summary>
    /// The database's options including the default family's settings (what
    /// <see cref="KvOptions.LoadLatest(string)"/> returns). Throws <see cref="KvException"/> when any family
    /// needs a merge operator KvEngine cannot build (one that is not built in).
    /// </summary>
    public KvOptions ToKvOptions()
    {
        foreach (NamedColumnFamilyOptions family in Families)
        {
            ThrowIfUnsupported(family);
        }
        KvOptions options = DbOptions.Clone();
        options.CopyFamilyFrom(Families[0].Options);
        return options;
    }

    /// <summary>Throws <see cref="KvException"/> for a family whose settings KvEngine cannot honour.</summary>
    public static void ThrowIfUnsupported(NamedColumnFamilyOptions family)
    {
        if (family.MergeOperator != null)
        {
            throw new KvException(
                $"Column family '{family.Name}' uses merge operator '{family.MergeOperator}', which is not built into KvEngine: open with ColumnFamilyOptions.MergeOperator set to an operator of that name.", KvStatusCode.InvalidArgument, KvStatusSubCode.None, null);
        }
    }
}
