using System.Globalization;

namespace KvEngine.Prefix;

/// <summary>
/// The persisted forms of a prefix extractor: "nullptr" for none, RocksDB's ids
/// <c>rocksdb.FixedPrefix.N</c> / <c>rocksdb.CappedPrefix.N</c>, and the option-string shorthands
/// <c>fixed:N</c> / <c>capped:N</c> RocksDB also accepts. Stateless.
/// </summary>
internal static class PrefixExtractorNames
{
    public const string None = "nullptr";

    public static string Format(KvPrefixExtractor? extractor) => extractor?.Name ?? None;

    /// <summary>
    /// The built-in extractor <paramref name="value"/> names; null for "nullptr"/empty or a name
    /// KvEngine cannot rebuild (<paramref name="known"/> false: a custom extractor).
    /// </summary>
    public static KvPrefixExtractor? TryCreate(string value, out bool known)
    {
        known = true;
        if (value.Length == 0 || value == None)
        {
            return null;
        }
        if (TryLength(value, FixedPrefixExtractor.NamePrefix, "fixed:", out int fixedLength))
        {
            return new FixedPrefixExtractor(fixedLength);
        }
        if (TryLength(value, CappedPrefixExtractor.NamePrefix, "capped:", out int cap))
        {
            return new CappedPrefixExtractor(cap);
        }
        known = false;
        return null;
    }

    private static bool TryLength(string value, string id, string shorthand, out int length)
    {
        string? digits = value.StartsWith(id, StringComparison.Ordinal) ? value[id.Length..]
            : value.StartsWith(shorthand, StringComparison.Ordinal) ? value[shorthand.Length..] : null;
        length = 0;
        return digits != null && int.TryParse(digits, NumberStyles.None, CultureInfo.InvariantCulture, out length) && length >= 1;
    }
}
