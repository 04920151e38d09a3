namespace KvEngine;

/// <summary>
/// A column family to open or create, by name, with its options (RocksDB's
/// ColumnFamilyDescriptor). The options are copied when the database opens or creates the family.
/// </summary>
public sealed class ColumnFamilyDescriptor
{
    /// <summary>Describes the family <paramref name="name"/> with <paramref name="options"/> (defaults when null).</summary>
    /// <exception cref="ArgumentException"><paramref name="name"/> is null or empty.</exception>
    public ColumnFamilyDescriptor(string name, ColumnFamilyOptions? options = null)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        Name = name;
        Options = options ?? new ColumnFamilyOptions();
    }

    /// <summary>The family's name; "default" is the default family.</summary>
    public string Name { get; }

    /// <summary>The family's options.</summary>
    public ColumnFamilyOptions Options { get; }
}
