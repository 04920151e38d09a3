using System.Text;

namespace KvEngine.OptionsFile;

/// <summary>
/// Reads an OPTIONS file as RocksDB's RocksDBOptionsParser does: '#' comments (also trailing,
/// unless escaped), one <c>name = value</c> per line inside <c>[Section "argument"]</c> headers;
/// exactly one [DBOptions], at most one [Version] (options_file_version major at least 1), the
/// first [CFOptions] must be "default" and no family may recur, each [TableOptions/X "cf"] follows
/// its family's [CFOptions]. Structural errors and malformed values throw
/// <see cref="KvCorruptionException"/>; options KvEngine cannot honour (another comparator or
/// table format, a codec or checksum it lacks) throw <see cref="KvException"/>. Unknown options
/// are ignored, as with RocksDB's ignore_unknown_options. Stateless and thread-safe.
/// </summary>
internal static class OptionsFileParser
{
    public static OptionsFileContents Parse(string text, string source)
    {
        ArgumentNullException.ThrowIfNull(text);
        string version = "";
        KvOptions? db = null;
        bool sawVersion = false;
        var families = new List<NamedColumnFamilyOptions>();
        var familyNames = new HashSet<string>(StringComparer.Ordinal);
        var tableSections = new HashSet<string>(StringComparer.Ordinal);
        string? sectionKind = null;   // current section title
        string? sectionArg = null;
        ColumnFamilyOptions? family = null;
        string? mergeOperator = null;
        int lineNumber = 0;
        string? sectionArgOfFamily = null;

        void EndFamily()
        {
            if (family != null)
            {
                OptionsMapper.FinishFamily(family);
                families.Add(new NamedColumnFamilyOptions(sectionArgOfFamily!, family, mergeOperator));
                family = null;
                mergeOperator = null;
            }
        }

        foreach (string rawLine in text.Split('\n'))
        {
            lineNumber++;
            string line = StripComment(rawLine).Trim();
            if (line.Length == 0)
            {
                continue;
            }
            string where = $"{source}:{lineNumber}";
            if (line[0] == '[')
            {
                if (line[^1] != ']')
                {
                    throw new KvCorruptionException($"{where}: a section header must end with ']'.");
                }
                (sectionKind, sectionArg) = ParseSectionHeader(line, where);
                switch (sectionKind)
                {
                    case OptionsFileWriter.VersionSection:
                        if (sawVersion || sectionArg != null)
                        {
                            throw new KvCorruptionException($"{where}: [Version] must appear at most once, without an argument.");
                        }
                        sawVersion = true;
                        break;
                    case OptionsFileWriter.DbOptionsSection:
                        if (db != null || sectionArg != null)
                        {
                            throw new KvCorruptionException($"{where}: [DBOptions] must appear exactly once, without an argument.");
                        }
                        db = new KvOptions();
                        break;
                    case OptionsFileWriter.CfOptionsSection:
                        EndFamily();
                        if (sectionArg == null)
                        {
                            throw new KvCorruptionException($"{where}: [CFOptions] needs a column family name.");
                        }
                        if (familyNames.Count == 0 && sectionArg != OptionsFileWriter.DefaultColumnFamilyName)
                        {
                            throw new KvCorruptionException($"{where}: the first [CFOptions] must be \"default\", not \"{sectionArg}\".");
                        }
                        if (!familyNames.Add(sectionArg))
                        {
                            throw new KvCorruptionException($"{where}: column family \"{sectionArg}\" appears twice.");
                        }
                        family = new ColumnFamilyOptions();
                        sectionArgOfFamily = sectionArg;
                        break;
                    default:
                        if (!sectionKind.StartsWith("TableOptions/", StringComparison.Ordinal))
                        {
                            throw new KvCorruptionException($"{where}: unknown section [{sectionKind}].");
                        }
                        if (sectionArg == null || family == null || sectionArg != sectionArgOfFamily)
                        {
                            throw new KvCorruptionException($"{where}: [{sectionKind}] must follow the [CFOptions] of its column family.");
                        }
                        if (sectionKind != OptionsFileWriter.BlockBasedTableSection)
                        {
                            throw new KvNotSupportedException($"{where}: table format {sectionKind["TableOptions/".Length..]} is not supported by KvEngine (block-based tables only).");
                        }
                        if (!tableSections.Add(sectionArg))
                        {
                            throw new KvCorruptionException($"{where}: table options of \"{sectionArg}\" appear twice.");
                        }
                        break;
                }
                continue;
            }

            int eq = line.IndexOf('=', StringComparison.Ordinal);
            if (eq <= 0)
            {
                throw new KvCorruptionException($"{where}: expected 'name=value', found '{line}'.");
            }
            string name = line[..eq].Trim();
            string value = Unescape(line[(eq + 1)..].Trim(), where);
            if (name.Length == 0 || name.Contains(' ', StringComparison.Ordinal))
            {
                throw new KvCorruptionException($"{where}: malformed option name '{name}'.");
            }
            try
            {
                switch (sectionKind)
                {
                    case null:
                        throw new KvCorruptionException($"{where}: option '{name}' outside any section.");
                    case OptionsFileWriter.VersionSection:
                        if (name == "options_file_version")
                        {
                            CheckFileVersion(value, where);
                        }
                        else if (name == "rocksdb_version")
                        {
                            version = value;
                        }
                        break;
                    case OptionsFileWriter.DbOptionsSection:
                        OptionsMapper.ApplyDbOption(db!, name, value);
                        break;
                    case OptionsFileWriter.CfOptionsSection:
                        if (name == "merge_operator")
                        {
                            // A built-in operator is rebuilt; another one is kept by name and refused by the caller.
                            family!.MergeOperator = MergeOperatorOption.TryCreate(value, out bool known);
                            mergeOperator = known ? null : value;
                        }
                        else
                        {
                            OptionsMapper.ApplyCfOption(family!, name, value);
                        }
                        break;
                    default:
                        OptionsMapper.ApplyTableOption(family!, name, value);
                        break;
                }
            }
            catch (OptionsFormatException e)
            {
                throw new KvCorruptionException($"{where}: option {name}: {e.Message}.", e);
            }
            catch (KvNotSupportedException e)
            {
                throw new KvNotSupportedException($"{where}: option {name}: {e.Message}", e);
            }
            catch (KvException e) when (e is not KvCorruptionException)
            {
                throw new KvException($"{where}: option {name}: {e.Message}", e);
            }
        }
        EndFamily();
        if (db == null)
        {
            throw new KvCorruptionException($"{source}: no [DBOptions] section.");
        }
        if (families.Count == 0)
        {
            throw new KvCorruptionException($"{source}: no [CFOptions \"default\"] section.");
        }
        return new OptionsFileContents(version, db, families);
    }

    /// <summary>Drops everything from the first '#' not escaped by a backslash.</summary>
    private static string StripComment(string line)
    {
        for (int i = 0; i < line.Length; i++)
        {
            if (line[i] == '\\')
            {
                i++;
            }
            else if (line[i] == '#')
            {
                return line[..i];
            }
        }
        return line;
    }

    private static (string Kind, string? Arg) ParseSectionHeader(string line, string where)
    {
        string inner = line[1..^1].Trim();
        int space = inner.IndexOf(' ', StringComparison.Ordinal);
        if (space < 0)
        {
            if (inner.Length == 0)
            {
                throw new KvCorruptionException($"{where}: empty section header.");
            }
            return (inner, null);
        }
        string kind = inner[..space];
        string arg = inner[(space + 1)..].Trim();
        if (arg.Length < 2 || arg[0] != '"' || arg[^1] != '"')
        {
            throw new KvCorruptionException($"{where}: the section argument must be quoted: {line}");
        }
        return (kind, Unescape(arg[1..^1], where));
    }

    private static void CheckFileVersion(string value, string where)
    {
        string[] parts = value.Split('.');
        if (parts.Length is < 1 or > 2 || !int.TryParse(parts[0], System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out int major)
            || (parts.Length == 2 && !int.TryParse(parts[1], System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out _)))
        {
            throw new KvCorruptionException($"{where}: malformed options_file_version '{value}'.");
        }
        if (major < 1)
        {
            throw new KvCorruptionException($"{where}: options_file_version {value} is older than 1.0.");
        }
    }

    /// <summary>RocksDB's UnescapeOptionString: "\n", "\r", "\t" and "\x" for any other x.</summary>
    private static string Unescape(string value, string where)
    {
        if (!value.Contains('\\', StringComparison.Ordinal))
        {
            return value;
        }
        var sb = new StringBuilder(value.Length);
        for (int i = 0; i < value.Length; i++)
        {
            char c = value[i];
            if (c != '\\')
            {
                sb.Append(c);
                continue;
            }
            if (++i == value.Length)
            {
                throw new KvCorruptionException($"{where}: a value ends with a lone backslash.");
            }
            sb.Append(value[i] switch { 'n' => '\n', 'r' => '\r', 't' => '\t', char other => other });
        }
        return sb.ToString();
    }
}
