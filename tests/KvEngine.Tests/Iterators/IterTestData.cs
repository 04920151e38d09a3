using System.Text;
using KvEngine.Format;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Iterators;

/// <summary>Random keys and the reference ordering for the iterator model tests.</summary>
internal static class IterTestData
{
    private static readonly ValueType[] s_seekTypes =
    [
        ValueType.Deletion, ValueType.Value, ValueType.Merge, ValueType.SingleDeletion, ValueType.ValueTypeForSeek,
    ];

    /// <summary>A user key of 0..3 letters from "abc" (40 distinct keys), or from "abcd" for seek targets.</summary>
    public static byte[] RandomUserKey(Random rng, bool target = false)
    {
        int len = rng.Next(4);
        var k = new byte[len];
        for (int i = 0; i < len; i++)
        {
            k[i] = (byte)('a' + rng.Next(target ? 4 : 3));
        }
        return k;
    }

    public static byte[] RandomSeekTarget(Random rng, ulong maxSeq)
    {
        ulong seq = rng.Next(10) switch
        {
            0 => 0,
            1 => InternalKeys.MaxSequenceNumber,
            _ => (ulong)rng.NextInt64(0, (long)maxSeq + 2),
        };
        return InternalKeys.Create(RandomUserKey(rng, target: true), seq, s_seekTypes[rng.Next(s_seekTypes.Length)]);
    }

    public static byte[] Bytes(string s) => Encoding.ASCII.GetBytes(s);

    public static string Text(ReadOnlySpan<byte> b) => Encoding.ASCII.GetString(b);

    public static string Describe(ReadOnlySpan<byte> ikey) =>
        $"'{Text(InternalKeys.UserKey(ikey))}'@{InternalKeys.Sequence(ikey)}:{InternalKeys.Type(ikey)}";

    /// <summary>Merged order: internal key, then source index.</summary>
    public static int CompareEntries((byte[] Key, byte[] Value, int Source) a, (byte[] Key, byte[] Value, int Source) b)
    {
        int c = InternalKeyComparer.Compare(a.Key, b.Key);
        return c != 0 ? c : a.Source.CompareTo(b.Source);
    }
}
