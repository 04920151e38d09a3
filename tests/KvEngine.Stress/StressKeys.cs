using System.Buffers.Binary;

namespace KvEngine.Stress;

/// <summary>
/// Keys and values of kvstress. Key i is its 8-byte big-endian encoding (so key order is index
/// order); the value of (key, base) is regenerated from both, so any value read can be checked
/// and its base recovered: 4 bytes base (little-endian), then bytes derived from key and base;
/// length ((base % 3) + 1) * value_size_mult, at least 8. Stateless and thread-safe.
/// </summary>
internal static class StressKeys
{
    public static byte[] Key(long index)
    {
        var k = new byte[8];
        BinaryPrimitives.WriteInt64BigEndian(k, index);
        return k;
    }

    /// <summary>The index of a key read back; -1 when it is not an 8-byte kvstress key.</summary>
    public static long Index(ReadOnlySpan<byte> key) => key.Length == 8 ? BinaryPrimitives.ReadInt64BigEndian(key) : -1;

    public static byte[] Value(long key, uint valueBase, int valueSizeMult)
    {
        var v = new byte[Length(valueBase, valueSizeMult)];
        Fill(key, valueBase, v);
        return v;
    }

    public static bool ValueMatches(long key, uint valueBase, ReadOnlySpan<byte> value, int valueSizeMult)
    {
        if (value.Length != Length(valueBase, valueSizeMult) || BinaryPrimitives.ReadUInt32LittleEndian(value) != valueBase)
        {
            return false;
        }
        for (int i = 4; i < value.Length; i++)
        {
            if (value[i] != Byte(key, valueBase, i))
            {
                return false;
            }
        }
        return true;
    }

    /// <summary>What a value read back looks like, for failure messages.</summary>
    public static string Describe(long key, ReadOnlySpan<byte> value, int valueSizeMult)
    {
        if (value.Length < 4)
        {
            return $"{value.Length}-byte value {Convert.ToHexString(value)} (not a kvstress value)";
        }
        uint b = BinaryPrimitives.ReadUInt32LittleEndian(value);
        return ValueMatches(key, b, value, valueSizeMult)
            ? $"value(base {b})"
            : $"{value.Length}-byte value claiming base {b} but with wrong bytes: {Convert.ToHexString(value[..Math.Min(value.Length, 32)])}";
    }

    public static string Describe(long key, byte[]? value, int valueSizeMult) =>
        value == null ? "absent" : Describe(key, value.AsSpan(), valueSizeMult);

    private static int Length(uint valueBase, int valueSizeMult) => Math.Max(8, (int)((valueBase % 3) + 1) * valueSizeMult);

    private static void Fill(long key, uint valueBase, Span<byte> v)
    {
        BinaryPrimitives.WriteUInt32LittleEndian(v, valueBase);
        for (int i = 4; i < v.Length; i++)
        {
            v[i] = Byte(key, valueBase, i);
        }
    }

    private static byte Byte(long key, uint valueBase, int i) => (byte)((key * 131) + (valueBase * 7) + (i * 13));
}
