namespace KvEngine.OptionsFile;

/// <summary>
/// One column family's entry in an OPTIONS file: its name and options. <see cref="MergeOperator"/>
/// is the merge_operator value as written (null for "nullptr"): KvEngine has no merge operator yet,
/// so a family naming one is refused by <see cref="OptionsFileContents.ToKvOptions"/>; the entry
/// keeps it so whoever maps families once merge operators exist can resolve it. Immutable record;
/// the options instance is the parser's own.
/// </summary>
internal sealed record NamedColumnFamilyOptions(string Name, ColumnFamilyOptions Options, string? MergeOperator = null);
