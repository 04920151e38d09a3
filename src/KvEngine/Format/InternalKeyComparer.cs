using System.Runtime.CompilerServices;

namespace KvEngine.Format;

/// <summary>
/// Orders internal keys: user key ascending (bytewise, RocksDB's "leveldb.BytewiseComparator"),
/// then trailer descending, i.e. newest sequence first, then larger type first.
/// Stateless and thread-safe.
/// </summary>
internal sealed class InternalKeyComparer : IComparer<byte[]>
{
    public const string BytewiseComparatorName = "leveldb.BytewiseComparator";

    public static readonly InternalKeyComparer Instance = new();

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int Compare(ReadOnlySpan<byte> a, ReadOnlySpan<byte> b)
    {
        int r = InternalKeys.UserKey(a).SequenceCompareTo(InternalKeys.UserKey(b));
        if (r != 0)
        {
            return r;
        }
        ulong ta = InternalKeys.Trailer(a);
        ulong tb = InternalKeys.Trailer(b);
        return ta > tb ? -1 : ta < tb ? 1 : 0;
    }

    /// <summary>Bytewise user-key comparison.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int CompareUserKeys(ReadOnlySpan<byte> a, ReadOnlySpan<byte> b) => a.SequenceCompareTo(b);

    int IComparer<byte[]>.Compare(byte[]? x, byte[]? y) => Compare(x, y);
}
