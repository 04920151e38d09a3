using System.Text;

namespace KvEngine.OptionsFile;

/// <summary>
/// The merge_operator value of an OPTIONS file, as RocksDB 7.8 writes it: <c>nullptr</c> for none,
/// the operator's name for one without options (<c>UInt64AddOperator</c>), and the object form
/// for one with options (<c>{id=StringAppendOperator;delimiter=,;}</c>, the delimiter escaped as
/// option strings are). Built-in operators are rebuilt from it; any other name cannot be (an
/// operator is code), and the caller refuses it. Stateless.
/// </summary>
internal static class MergeOperatorOption
{
    public const string None = "nullptr";

    public static string Format(KvMergeOperator? op)
    {
        if (op is null)
        {
            return None;
        }
        if (op is StringAppendOperator append && IsPrintableAscii(append.Delimiter))
        {
            return "{id=" + StringAppendOperator.OperatorName + ";delimiter=" +
                OptionsFileWriter.Escape(Encoding.ASCII.GetString(append.Delimiter)) + ";}";
        }
        return op.Name;
    }

    /// <summary>The built-in operator <paramref name="value"/> describes; null for <c>nullptr</c> or an operator KvEngine cannot build.</summary>
    public static KvMergeOperator? TryCreate(string value, out bool known)
    {
        known = true;
        if (value == None)
        {
            return null;
        }
        string id = value;
        string? delimiter = null;
        if (value.StartsWith('{') && value.EndsWith('}'))
        {
            id = "";
            foreach (string part in value[1..^1].Split(';', StringSplitOptions.RemoveEmptyEntries))
            {
                int eq = part.IndexOf('=', StringComparison.Ordinal);
                if (eq < 0)
                {
                    continue;
                }
                string key = part[..eq];
                string v = Unescape(part[(eq + 1)..]);
                if (key == "id")
                {
                    id = v;
                }
                else if (key == "delimiter")
                {
                    delimiter = v;
                }
            }
        }
        switch (id)
        {
            case UInt64AddOperator.OperatorName:
                return new UInt64AddOperator();
            case StringAppendOperator.OperatorName:
                return delimiter is null ? new StringAppendOperator() : new StringAppendOperator(Encoding.Latin1.GetBytes(delimiter));
            default:
                known = false;
                return null;
        }
    }

    private static bool IsPrintableAscii(ReadOnlySpan<byte> bytes)
    {
        foreach (byte b in bytes)
        {
            if (b is < 0x20 or > 0x7E || b == (byte)';' || b == (byte)'}' || b == (byte)'{')
            {
                return false;
            }
        }
        return bytes.Length > 0;
    }

    private static string Unescape(string value)
    {
        if (!value.Contains('\\', StringComparison.Ordinal))
        {
            return value;
        }
        var sb = new StringBuilder(value.Length);
        for (int i = 0; i < value.Length; i++)
        {
            if (value[i] == '\\' && i + 1 < value.Length)
            {
                i++;
            }
            sb.Append(value[i]);
        }
        return sb.ToString();
    }
}
