using System.IO.Hashing;

namespace KvEngine.Table;

/// <summary>
/// XXH32 and XXH64 with seed 0 (System.IO.Hashing), only for reading and writing tables with
/// RocksDB's older kxxHash and kxxHash64 block checksums. Each hashes the concatenation of
/// <c>head</c> and a short <c>tail</c> (the block and its type byte) without copying the block:
/// a per-thread streaming hasher takes the two parts in turn, so a call allocates nothing.
/// Thread-safe (the hashers are thread-local).
/// </summary>
internal static class LegacyXxHash
{
    [ThreadStatic]
    private static XxHash32? t_hash32;

    [ThreadStatic]
    private static XxHash64? t_hash64;

    /// <summary>XXH32(head ++ tail, seed 0).</summary>
    public static uint Hash32(ReadOnlySpan<byte> head, ReadOnlySpan<byte> tail)
    {
        XxHash32 hash = t_hash32 ??= new XxHash32();
        hash.Reset();
        hash.Append(head);
        hash.Append(tail);
        return hash.GetCurrentHashAsUInt32();
    }

    /// <summary>XXH64(head ++ tail, seed 0).</summary>
    public static ulong Hash64(ReadOnlySpan<byte> head, ReadOnlySpan<byte> tail)
    {
        XxHash64 hash = t_hash64 ??= new XxHash64();
        hash.Reset();
        hash.Append(head);
        hash.Append(tail);
        return hash.GetCurrentHashAsUInt64();
    }
}
