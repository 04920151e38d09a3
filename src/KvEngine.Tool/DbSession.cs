using System.Text;

namespace KvEngine.Tool;

/// <summary>
/// An open database for one command, with every column family it has (ldb opens them all too) and
/// the one <c>--column_family</c> names (default: "default"). Read-only commands open with
/// <see cref="KvDb.OpenReadOnly(string, KvOptions, IEnumerable{ColumnFamilyDescriptor}, bool)"/>,
/// which replays the WAL into memory and changes no file, so kvtool can look at a database a
/// crashed process left without touching it. Options come from the database's newest OPTIONS
/// file when it has a usable one (ldb's --try_load_options; --ignore_options skips it), else
/// KvEngine's defaults. A database that does not exist is an error unless --create_if_missing.
/// </summary>
internal sealed class DbSession : IDisposable
{
    private DbSession(KvDb db, ColumnFamilyHandle family)
    {
        Db = db;
        Family = family;
    }

    public KvDb Db { get; }

    /// <summary>The family --column_family names.</summary>
    public ColumnFamilyHandle Family { get; }

    public static DbSession Open(ToolArgs args, string command, bool readOnly)
    {
        string path = args.Require("db", command);
        bool create = args.Has("create_if_missing");
        if (!create && !File.Exists(Path.Combine(path, "CURRENT")))
        {
            throw new ToolFailureException(Directory.Exists(path)
                ? $"IO error: {path} is not a database (no CURRENT file)."
                : $"IO error: database directory {path} does not exist (--create_if_missing creates one).");
        }
        KvOptions options = LoadOptions(path, args, out IReadOnlyList<ColumnFamilyDescriptor> families);
        options.CreateIfMissing = create;
        var descriptors = new List<ColumnFamilyDescriptor>();
        var configured = families.ToDictionary(f => f.Name, StringComparer.Ordinal);
        descriptors.Add(new ColumnFamilyDescriptor("default", options));
        if (!create || File.Exists(Path.Combine(path, "CURRENT")))
        {
            foreach (string name in KvDb.ListColumnFamilies(path))
            {
                if (name != "default")
                {
                    descriptors.Add(configured.TryGetValue(name, out ColumnFamilyDescriptor? d) ? d : new ColumnFamilyDescriptor(name));
                }
            }
        }
        KvDb db = readOnly ? KvDb.OpenReadOnly(path, options, descriptors) : KvDb.Open(path, options, descriptors);
        string familyName = args.Get("column_family") ?? "default";
        ColumnFamilyHandle? family = db.GetColumnFamily(familyName);
        if (family == null)
        {
            db.Dispose();
            throw new ToolFailureException($"Invalid argument: column family '{familyName}' does not exist in {path}.");
        }
        return new DbSession(db, family);
    }

    /// <summary>The options of the newest OPTIONS file, or defaults when there is none or KvEngine cannot use it.</summary>
    public static KvOptions LoadOptions(string path, ToolArgs args, out IReadOnlyList<ColumnFamilyDescriptor> families)
    {
        families = [];
        if (!args.Has("ignore_options") && Directory.Exists(path) && Directory.EnumerateFiles(path, "OPTIONS-*").Any())
        {
            try
            {
                return KvOptions.LoadLatest(path, out families);
            }
            catch (KvException e) when (e is not KvCorruptionException)
            {
                // An OPTIONS file naming what KvEngine lacks (a merge operator, a comparator):
                // the defaults still read the data; a table that needs the missing piece fails on its own.
            }
        }
        return new KvOptions();
    }

    /// <summary>A key or value argument: hex (with or without 0x) when <paramref name="hex"/>, else its UTF-8 bytes.</summary>
    public static byte[] ParseBytes(string text, bool hex, string what)
    {
        if (!hex)
        {
            return Encoding.UTF8.GetBytes(text);
        }
        ReadOnlySpan<char> digits = text.StartsWith("0x", StringComparison.OrdinalIgnoreCase) ? text.AsSpan(2) : text;
        try
        {
            return Convert.FromHexString(digits);
        }
        catch (FormatException)
        {
            throw new ToolUsageException($"Invalid hex {what} '{text}'.");
        }
    }

    public void Dispose() => Db.Dispose();
}
