using System.Diagnostics;
using System.IO.Hashing;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics.X86;
using KvEngine.Format;

namespace KvEngine.Memtable;

/// <summary>
/// A hash index over a memtable's point entries by user key, so that a point lookup finds its key's
/// newest entry in one or two cache misses instead of a skip-list search (about twenty dependent
/// misses in a 64 MiB memtable). RocksDB has no such structure on its default skip list; its nearest
/// is the memtable Bloom filter (memtable_whole_key_filtering), which saves the search only for
/// keys the memtable lacks.
/// <code>
/// Index  := bucket: pointer[bucketCount]    // native, in the memtable's arena; bucketCount a power of two
/// Chain  := entry → link(entry) → ...       // through each entry's link word (SkipList.LinkOf), null-terminated
/// bucket of a user key = XxHash3(user key) &amp; (bucketCount - 1)
/// </code>
/// <para>
/// Invariants: a chain holds at most one entry per user key, the newest (highest sequence) of that
/// key added so far; every entry in a chain is already linked into the skip list at level 0, whose
/// order puts a key's older entries right after it. So the index entry of a key plus a level-0 walk
/// reaches every entry of the key, newest first. An entry leaves its chain only when a newer entry
/// of the same key takes its place (its predecessor's link is swung to the new entry, whose link is
/// the old entry's successor); the old entry's own link is never changed, so a reader standing on it
/// walks on to the rest of the chain.
/// </para>
/// <para>
/// Thread-safety: readers (<see cref="FindNewest"/>) take no lock and load every link with an
/// acquire read; a writer publishes an entry, fully written, with a release store. Writers are the
/// memtable's: one at a time (<see cref="Add"/>), or any number at once through
/// <see cref="AddConcurrently"/>, which serializes writers of the same bucket stripe with a spin lock
/// held for the few loads and stores of one chain update. The bucket array lives as long as the arena.
/// </para>
/// </summary>
internal sealed unsafe class MemTableHashIndex
{
    /// <summary>Fewest and most buckets an index gets.</summary>
    public const int MinBuckets = 1 << 8;
    public const int MaxBuckets = 1 << 26;

    // Stripes of bucket locks for concurrent writers, each on its own cache line.
    private const int LockStripes = 64;
    private const int LockStride = 16;

    private readonly nint* _buckets;
    private readonly ulong _mask;
    private readonly int[] _locks = new int[LockStripes * LockStride];

    /// <summary>An index of <paramref name="bucketCount"/> buckets (a power of two) carved from <paramref name="arena"/>.</summary>
    public MemTableHashIndex(Arena arena, int bucketCount)
    {
        ArgumentNullException.ThrowIfNull(arena);
        if (bucketCount < MinBuckets || bucketCount > MaxBuckets || !int.IsPow2(bucketCount))
        {
            throw new ArgumentOutOfRangeException(nameof(bucketCount), bucketCount, $"A power of two from {MinBuckets} to {MaxBuckets}.");
        }
        _buckets = (nint*)arena.AllocateAligned(bucketCount * sizeof(nint));
        NativeMemory.Clear(_buckets, (nuint)bucketCount * (nuint)sizeof(nint));
        _mask = (ulong)bucketCount - 1;
        BucketCount = bucketCount;
    }

    public int BucketCount { get; }

    /// <summary>
    /// The bucket count for a memtable of <paramref name="writeBufferSize"/> bytes whose index may
    /// take <paramref name="ratio"/> of it (0: no index).
    /// </summary>
    public static int BucketsFor(long writeBufferSize, double ratio)
    {
        if (ratio <= 0)
        {
            return 0;
        }
        double buckets = writeBufferSize * ratio / sizeof(nint);
        if (buckets <= MinBuckets)
        {
            return MinBuckets;
        }
        return buckets >= MaxBuckets ? MaxBuckets : (int)BitOperations.RoundUpToPowerOf2((uint)buckets);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ulong Hash(ReadOnlySpan<byte> userKey) => XxHash3.HashToUInt64(userKey);

    /// <summary>Warms the cache line of <paramref name="hash"/>'s bucket (a writer about to add, a reader about to look).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Prefetch(ulong hash)
    {
        if (Sse.IsSupported)
        {
            Sse.Prefetch0(_buckets + (hash & _mask));
        }
    }

    /// <summary>
    /// The newest entry of <paramref name="userKey"/> added so far (its older ones follow it at level
    /// 0 of the skip list), or null when the memtable has none. Any thread, lock-free.
    /// </summary>
    public byte* FindNewest(ReadOnlySpan<byte> userKey, ulong hash)
    {
        byte* entry = (byte*)Volatile.Read(ref _buckets[hash & _mask]);
        while (entry != null)
        {
            if (HasUserKey(entry, userKey))
            {
                return entry;
            }
            entry = (byte*)Volatile.Read(ref *SkipList.LinkOf(entry));
        }
        return null;
    }

    /// <summary>
    /// Single writer: indexes <paramref name="entry"/> (sequence <paramref name="sequence"/>), already
    /// linked into the skip list, unless its key's indexed entry is newer.
    /// </summary>
    public void Add(byte* entry, ReadOnlySpan<byte> userKey, ulong sequence, ulong hash) =>
        Update(&_buckets[hash & _mask], entry, userKey, sequence);

    /// <summary><see cref="Add"/> for any number of writers at once.</summary>
    public void AddConcurrently(byte* entry, ReadOnlySpan<byte> userKey, ulong sequence, ulong hash)
    {
        ulong bucket = hash & _mask;
        ref int gate = ref _locks[(int)(bucket % LockStripes) * LockStride];
        if (Interlocked.CompareExchange(ref gate, 1, 0) != 0)
        {
            var spinner = default(SpinWait);
            do
            {
                spinner.SpinOnce();
            }
            while (Volatile.Read(ref gate) != 0 || Interlocked.CompareExchange(ref gate, 1, 0) != 0);
        }
        try
        {
            Update(&_buckets[bucket], entry, userKey, sequence);
        }
        finally
        {
            Volatile.Write(ref gate, 0);
        }
    }

    // The chain's writer (exclusive): replaces the key's entry when this one is newer, else pushes it at the head.
    private static void Update(nint* bucket, byte* entry, ReadOnlySpan<byte> userKey, ulong sequence)
    {
        nint* link = bucket;
        byte* current = (byte*)*link;
        while (current != null)
        {
            if (HasUserKey(current, userKey))
            {
                if (InternalKeys.Sequence(MemTableEntry.InternalKey(current)) > sequence)
                {
                    return; // a concurrent writer indexed a newer entry; this one follows it at level 0
                }
                *SkipList.LinkOf(entry) = *SkipList.LinkOf(current);
                Volatile.Write(ref *link, (nint)entry); // release: the entry and its link first
                return;
            }
            link = SkipList.LinkOf(current);
            current = (byte*)*link;
        }
        *SkipList.LinkOf(entry) = *bucket;
        Volatile.Write(ref *bucket, (nint)entry);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool HasUserKey(byte* entry, ReadOnlySpan<byte> userKey)
    {
        ReadOnlySpan<byte> internalKey = MemTableEntry.InternalKey(entry);
        Debug.Assert(internalKey.Length >= InternalKeys.TrailerSize);
        return internalKey.Length - InternalKeys.TrailerSize == userKey.Length
            && internalKey[..userKey.Length].SequenceEqual(userKey);
    }
}
