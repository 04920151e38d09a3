using System.Globalization;

namespace KvEngine.OptionsFile;

/// <summary>
/// Names of RocksDB's options files in a database directory (file/filename.cc): the final
/// <c>OPTIONS-NNNNNN</c> (at least six digits) and the temporary <c>OPTIONS-NNNNNN.dbtmp</c> it is
/// written as before the rename. Stateless and thread-safe.
/// </summary>
internal static class OptionsFileNames
{
    public const string Prefix = "OPTIONS-";
    public const string TempSuffix = ".dbtmp";

    public static string FileName(ulong number) => Prefix + number.ToString("D6", CultureInfo.InvariantCulture);

    public static string TempFileName(ulong number) => FileName(number) + TempSuffix;

    /// <summary>Parses <c>OPTIONS-NNNNNN</c> (<paramref name="isTemp"/> false) or its <c>.dbtmp</c> form.</summary>
    public static bool TryParse(string name, out ulong number, out bool isTemp)
    {
        number = 0;
        isTemp = false;
        if (!name.StartsWith(Prefix, StringComparison.Ordinal))
        {
            return false;
        }
        ReadOnlySpan<char> digits = name.AsSpan(Prefix.Length);
        if (digits.EndsWith(TempSuffix, StringComparison.Ordinal))
        {
            digits = digits[..^TempSuffix.Length];
            isTemp = true;
        }
        return digits.Length > 0 && ulong.TryParse(digits, NumberStyles.None, CultureInfo.InvariantCulture, out number);
    }
}
