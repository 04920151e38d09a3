using System.Globalization;

namespace KvEngine.Versions;

/// <summary>
/// RocksDB's file names inside a database directory: <c>CURRENT</c>, <c>LOCK</c>, <c>IDENTITY</c>,
/// <c>MANIFEST-NNNNNN</c>, <c>NNNNNN.log</c>, <c>NNNNNN.sst</c>, <c>NNNNNN.dbtmp</c>, <c>LOG</c>.
/// Stateless.
/// </summary>
internal static class FileNames
{
    public const string Current = "CURRENT";
    public const string Lock = "LOCK";
    public const string Identity = "IDENTITY";

    public static string LogFile(string dir, ulong number) => Path.Combine(dir, Format(number) + ".log");

    public static string TableFile(string dir, ulong number) => Path.Combine(dir, Format(number) + ".sst");

    public static string ManifestFile(string dir, ulong number) => Path.Combine(dir, ManifestName(number));

    public static string ManifestName(ulong number) => "MANIFEST-" + Format(number);

    public static string TempFile(string dir, ulong number) => Path.Combine(dir, Format(number) + ".dbtmp");

    public static string CurrentFile(string dir) => Path.Combine(dir, Current);

    public static string LockFile(string dir) => Path.Combine(dir, Lock);

    public static string IdentityFile(string dir) => Path.Combine(dir, Identity);

    /// <summary>Classifies a directory entry; false for names that are not ours.</summary>
    public static bool TryParse(string name, out DbFileType type, out ulong number)
    {
        number = 0;
        type = default;
        switch (name)
        {
            case Current:
                type = DbFileType.Current;
                return true;
            case Lock:
                type = DbFileType.Lock;
                return true;
            case Identity:
                type = DbFileType.Identity;
                return true;
        }
        if (name.StartsWith("MANIFEST-", StringComparison.Ordinal))
        {
            type = DbFileType.Manifest;
            return ulong.TryParse(name.AsSpan(9), NumberStyles.None, CultureInfo.InvariantCulture, out number);
        }
        int dot = name.IndexOf('.', StringComparison.Ordinal);
        if (dot <= 0 || !ulong.TryParse(name.AsSpan(0, dot), NumberStyles.None, CultureInfo.InvariantCulture, out number))
        {
            return false;
        }
        switch (name.AsSpan(dot))
        {
            case ".log":
                type = DbFileType.Log;
                return true;
            case ".sst":
                type = DbFileType.Table;
                return true;
            case ".dbtmp":
                type = DbFileType.Temp;
                return true;
            default:
                return false;
        }
    }

    private static string Format(ulong number) => number.ToString("D6", CultureInfo.InvariantCulture);
}
