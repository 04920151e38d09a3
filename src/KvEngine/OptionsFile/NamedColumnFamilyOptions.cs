namespace KvEngine.OptionsFile;

/// <summary>
/// One column family's entry in an OPTIONS file: its name and options. <see cref="MergeOperator"/>
/// is the merge_operator value as written when it names an operator KvEngine cannot build (null for
/// "nullptr" and for the built-in ones, which are set on the options): a family naming one is
/// refused by <see cref="OptionsFileContents.ToKvOptions"/>. Immutable record;
/// the options instance is the parser's own.
/// </summary>
internal sealed record NamedColumnFamilyOptions(string Name, ColumnFamilyOptions Options, string? MergeOperator = null);
