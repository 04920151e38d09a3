using System.Buffers.Binary;
using System.Globalization;
using System.Text;

namespace KvEngine.Tests.Metamorphic;

/// <summary>
/// Bytes of the keys and value tokens of an op log, and the printable form of what a read
/// returned (the results every configuration and the model must agree on). Stateless.
/// </summary>
internal static class MetaValues
{
    public const string Absent = "<absent>";
    public const string Invalid = "<invalid>";

    public static byte[] Key(string key) => Encoding.ASCII.GetBytes(key);

    /// <summary>The bytes of a value token: "#N" (8-byte little-endian), "text~N" (padded to N bytes) or literal text.</summary>
    public static byte[] Value(string token)
    {
        if (token.Length > 1 && token[0] == '#')
        {
            var bytes = new byte[8];
            BinaryPrimitives.WriteUInt64LittleEndian(bytes, ulong.Parse(token.AsSpan(1), NumberStyles.None, CultureInfo.InvariantCulture));
            return bytes;
        }
        int tilde = token.LastIndexOf('~');
        if (tilde > 0 && int.TryParse(token.AsSpan(tilde + 1), NumberStyles.None, CultureInfo.InvariantCulture, out int length) && length > tilde)
        {
            var bytes = new byte[length];
            Encoding.ASCII.GetBytes(token.AsSpan(0, tilde), bytes);
            // A filler that compresses somewhat (runs of one letter) but not to nothing, the same in
            // every process (FNV-1a of the token seeds it).
            uint h = 2166136261;
            foreach (char c in token)
            {
                h = (h ^ c) * 16777619;
            }
            for (int i = tilde; i < length; i++)
            {
                if (i % 8 == 0)
                {
                    h = (h * 1103515245) + 12345;
                }
                bytes[i] = (byte)('a' + ((h >> 16) % 26));
            }
            return bytes;
        }
        return Encoding.ASCII.GetBytes(token);
    }

    /// <summary>A value or key as text: printable ASCII as is (a backslash doubled), other bytes as \xNN.</summary>
    public static string Show(ReadOnlySpan<byte> bytes)
    {
        var sb = new StringBuilder(bytes.Length);
        foreach (byte b in bytes)
        {
            if (b is > 0x20 and < 0x7F and not (byte)'\\')
            {
                sb.Append((char)b);
            }
            else
            {
                sb.Append("\\x").Append(b.ToString("x2", CultureInfo.InvariantCulture));
            }
        }
        return sb.ToString();
    }

    public static string Show(byte[]? value) => value == null ? Absent : Show(value.AsSpan());

    /// <summary>A result shortened for a failure message (the comparison uses the whole text).</summary>
    public static string Abbreviate(string result) => result.Length <= 400 ? result : result[..300] + $"... ({result.Length} chars)";
}
