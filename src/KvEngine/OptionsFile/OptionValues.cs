using System.Globalization;
using System.Text;

namespace KvEngine.OptionsFile;

/// <summary>
/// RocksDB's spellings of option values in an OPTIONS file (options/options_helper.cc): enum
/// names, booleans, numbers with their k/m/g/t suffixes, doubles as <c>%f</c>, structs
/// <c>{a=1;b=2;}</c>. Parsing failures throw <see cref="OptionsFormatException"/>, which the
/// parser turns into a <see cref="KvCorruptionException"/> naming the file, section and option.
/// Stateless and thread-safe.
/// </summary>
internal static class OptionValues
{
    // RocksDB's enum spellings, each with KvEngine's value or null where KvEngine lacks it. The
    // writer formats through these tables and the parser reads through them: one list per enum.
    public static readonly (string Name, KvCompressionType? Value)[] CompressionNames =
    [
        ("kNoCompression", KvCompressionType.None),
        ("kSnappyCompression", KvCompressionType.Snappy),
        ("kZlibCompression", null),
        ("kBZip2Compression", null),
        ("kLZ4Compression", KvCompressionType.Lz4),
        ("kLZ4HCCompression", KvCompressionType.Lz4HC),
        ("kXpressCompression", null),
        ("kZSTD", KvCompressionType.Zstd),
        ("kZSTDNotFinalCompression", KvCompressionType.Zstd), // ZSTD's pre-1.0 id: the same codec; formatting finds kZSTD first
    ];

    public static readonly (string Name, KvChecksumType? Value)[] ChecksumNames =
        [("kNoChecksum", null), ("kCRC32c", KvChecksumType.Crc32C), ("kxxHash", null), ("kxxHash64", null), ("kXXH3", KvChecksumType.XxHash3)];

    public static readonly (string Name, KvIndexType? Value)[] IndexTypeNames =
        [("kBinarySearch", KvIndexType.BinarySearch), ("kHashSearch", null), ("kTwoLevelIndexSearch", KvIndexType.TwoLevelIndexSearch), ("kBinarySearchWithFirstKey", null)];

    public static readonly (string Name, KvDataBlockIndexType? Value)[] DataBlockIndexTypeNames =
        [("kDataBlockBinarySearch", KvDataBlockIndexType.BinarySearch), ("kDataBlockBinaryAndHash", KvDataBlockIndexType.BinaryAndHash)];

    public static readonly (string Name, KvPinningTier? Value)[] PinningTierNames =
        [("kFallback", KvPinningTier.Fallback), ("kNone", KvPinningTier.None), ("kFlushedAndSimilar", KvPinningTier.FlushedAndSimilar), ("kAll", KvPinningTier.All)];

    public static readonly (string Name, CompactionStyle? Value)[] CompactionStyleNames =
        [("kCompactionStyleLevel", CompactionStyle.Level), ("kCompactionStyleUniversal", null), ("kCompactionStyleFIFO", CompactionStyle.Fifo), ("kCompactionStyleNone", null)];

    public static readonly (string Name, CompactionPri? Value)[] CompactionPriNames =
    [
        ("kByCompensatedSize", null), ("kOldestLargestSeqFirst", null), ("kOldestSmallestSeqFirst", null),
        ("kMinOverlappingRatio", CompactionPri.MinOverlappingRatio), ("kRoundRobin", CompactionPri.RoundRobin),
    ];

    public static readonly (string Name, WalRecoveryMode? Value)[] WalRecoveryModeNames =
    [
        ("kTolerateCorruptedTailRecords", WalRecoveryMode.TolerateCorruptedTailRecords), ("kAbsoluteConsistency", WalRecoveryMode.AbsoluteConsistency),
        ("kPointInTimeRecovery", WalRecoveryMode.PointInTimeRecovery), ("kSkipAnyCorruptedRecords", WalRecoveryMode.SkipAnyCorruptedRecords),
    ];

    public const string DisableCompressionOption = "kDisableCompressionOption";

    public static string Format(bool value) => value ? "true" : "false";

    public static string Format(long value) => value.ToString(CultureInfo.InvariantCulture);

    public static string Format(ulong value) => value.ToString(CultureInfo.InvariantCulture);

    /// <summary>A double as RocksDB writes it (<c>std::to_string</c>, i.e. <c>%f</c>: six decimals).</summary>
    public static string Format(double value) => value.ToString("F6", CultureInfo.InvariantCulture);

    /// <summary>RocksDB's name for <paramref name="value"/> in <paramref name="names"/>.</summary>
    public static string FormatEnum<T>(T value, (string Name, T? Value)[] names)
        where T : struct, Enum
    {
        foreach ((string name, T? v) in names)
        {
            if (v is { } known && EqualityComparer<T>.Default.Equals(known, value))
            {
                return name;
            }
        }
        throw new ArgumentOutOfRangeException(nameof(value), value, $"Unknown {typeof(T).Name} value.");
    }

    /// <summary>
    /// RocksDB's filter_policy value for a Bloom filter of <paramref name="bitsPerKey"/> (0: none):
    /// <c>bloomfilter:10:false</c>, with up to three decimals (millibits) when fractional.
    /// </summary>
    public static string FormatBloomFilter(double bitsPerKey)
    {
        if (bitsPerKey <= 0)
        {
            return "nullptr";
        }
        int millibits = (int)((bitsPerKey * 1000.0) + 0.500001);
        var sb = new StringBuilder("bloomfilter:");
        sb.Append((millibits / 1000).ToString(CultureInfo.InvariantCulture));
        int frac = millibits % 1000;
        if (frac > 0)
        {
            sb.Append('.').Append((char)('0' + (frac / 100)));
            frac %= 100;
            if (frac > 0)
            {
                sb.Append((char)('0' + (frac / 10)));
                frac %= 10;
                if (frac > 0)
                {
                    sb.Append((char)('0' + frac));
                }
            }
        }
        return sb.Append(":false").ToString();
    }

    /// <summary>A struct value: <c>{name=value;...}</c>, in the order given.</summary>
    public static string FormatStruct(params (string Name, string Value)[] fields)
    {
        var sb = new StringBuilder("{");
        foreach ((string name, string value) in fields)
        {
            sb.Append(name).Append('=').Append(value).Append(';');
        }
        return sb.Append('}').ToString();
    }

    public static bool ParseBool(string value) => value switch
    {
        "true" or "1" => true,
        "false" or "0" => false,
        _ => throw new OptionsFormatException($"'{value}' is not a boolean"),
    };

    /// <summary>An integer with RocksDB's optional k/m/g/t (x1024) suffix, checked against the range.</summary>
    public static long ParseInt64(string value, long min = long.MinValue, long max = long.MaxValue)
    {
        ReadOnlySpan<char> digits = value;
        int shift = 0;
        if (digits.Length > 1)
        {
            shift = char.ToLowerInvariant(digits[^1]) switch { 'k' => 10, 'm' => 20, 'g' => 30, 't' => 40, _ => 0 };
            if (shift != 0)
            {
                digits = digits[..^1];
            }
        }
        if (!long.TryParse(digits, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out long n))
        {
            throw new OptionsFormatException($"'{value}' is not an integer");
        }
        if (shift != 0)
        {
            if (n > (long.MaxValue >> shift) || n < (long.MinValue >> shift))
            {
                throw new OptionsFormatException($"'{value}' is out of range");
            }
            n <<= shift;
        }
        if (n < min || n > max)
        {
            throw new OptionsFormatException($"{n} is outside [{min}, {max}]");
        }
        return n;
    }

    public static int ParseInt32(string value, int min = int.MinValue, int max = int.MaxValue) => (int)ParseInt64(value, min, max);

    /// <summary>An unsigned 64-bit value (suffixes as <see cref="ParseInt64"/>); values above long.MaxValue saturate to it.</summary>
    public static long ParseUInt64Saturating(string value)
    {
        if (ulong.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out ulong u))
        {
            return u > long.MaxValue ? long.MaxValue : (long)u;
        }
        return ParseInt64(value, 0);
    }

    public static double ParseDouble(string value)
    {
        if (!double.TryParse(value, NumberStyles.Float, CultureInfo.InvariantCulture, out double d) || !double.IsFinite(d))
        {
            throw new OptionsFormatException($"'{value}' is not a number");
        }
        return d;
    }

    /// <summary>The value named <paramref name="value"/>; <see cref="KvException"/> when KvEngine lacks it.</summary>
    public static T ParseEnum<T>(string value, (string Name, T? Value)[] names)
        where T : struct, Enum
    {
        foreach ((string name, T? parsed) in names)
        {
            if (name == value)
            {
                return parsed ?? throw new KvNotSupportedException($"{typeof(T).Name} '{value}' is not supported by KvEngine (supported: {Supported(names)}).");
            }
        }
        throw new OptionsFormatException($"'{value}' is not a {typeof(T).Name} value");
    }

    private static string Supported<T>((string Name, T? Value)[] names)
        where T : struct, Enum =>
        string.Join(", ", names.Where(n => n.Value != null).Select(n => n.Name));

    /// <summary>
    /// Splits a struct value <c>{a=1;b={c=2;};}</c> (braces optional) into its fields, nested
    /// structs kept whole. Throws on unbalanced braces or a field without '='.
    /// </summary>
    public static Dictionary<string, string> ParseStruct(string value)
    {
        ReadOnlySpan<char> s = value.AsSpan().Trim();
        if (s.Length >= 2 && s[0] == '{' && s[^1] == '}')
        {
            s = s[1..^1];
        }
        else if (s.Length > 0 && (s[0] == '{' || s[^1] == '}'))
        {
            throw new OptionsFormatException($"unbalanced braces in '{value}'");
        }
        var fields = new Dictionary<string, string>(StringComparer.Ordinal);
        int pos = 0;
        while (pos < s.Length)
        {
            int eq = s[pos..].IndexOf('=');
            if (eq < 0)
            {
                if (s[pos..].Trim().Length == 0)
                {
                    break;
                }
                throw new OptionsFormatException($"a field without '=' in '{value}'");
            }
            string name = s.Slice(pos, eq).Trim().ToString();
            int start = pos + eq + 1;
            int end = start;
            int depth = 0;
            while (end < s.Length && (depth > 0 || s[end] != ';'))
            {
                if (s[end] == '{')
                {
                    depth++;
                }
                else if (s[end] == '}' && --depth < 0)
                {
                    throw new OptionsFormatException($"unbalanced braces in '{value}'");
                }
                end++;
            }
            if (depth != 0)
            {
                throw new OptionsFormatException($"unbalanced braces in '{value}'");
            }
            if (name.Length == 0)
            {
                throw new OptionsFormatException($"a field without a name in '{value}'");
            }
            fields[name] = s[start..end].Trim().ToString();
            pos = end + 1;
        }
        return fields;
    }
}
