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
/// Index  := bucket: id(4)[bucketCount]      // native, in the memtable's arena; bucketCount a power of two
/// Chain  := node → link(node) → ...         // skip-list node ids (Arena ids) through each node's link word
///                                           // (SkipList.LinkOfNode), ending with 0
/// bucket of a user key = XxHash3(user key) &amp; (bucketCount - 1)
/// </code>
/// <para>
/// Invariants: every entry is pushed at the head of its bucket's chain once it is linked into the
/// skip list at level 0 and before its write is published, and never leaves the chain; so a chain
/// holds every entry of its keys a reader's sequence can see. Several entries of one user key may
/// be in a chain in any order (concurrent writers push in any order), so a lookup takes the
/// highest sequence among the matches: the key's newest entry, from which the skip list's level 0
/// reaches every older one. A lookup walks at most <see cref="MaxChainWalk"/> entries (a key
/// written thousands of times fills its bucket's chain); past that it reports that it cannot tell,
/// and the caller searches the skip list.
/// </para>
/// <para>
/// Thread-safety: readers (<see cref="TryFindNewest"/>) take no lock and load every link with an
/// acquire read. A writer fills the entry's link before publishing the entry at the head: with a
/// release store for the memtable's single writer (<see cref="Add"/>), with a compare-and-swap for
/// concurrent writers (<see cref="AddConcurrently"/>). An entry's link never changes once it is
/// published. The bucket array lives as long as the arena.
/// </para>
/// </summary>
internal sealed unsafe class MemTableHashIndex
{
    /// <summary>Fewest and most buckets an index gets.</summary>
    public const int MinBuckets = 1 << 8;
    public const int MaxBuckets = 1 << 26;

    /// <summary>Chain entries a lookup walks at most before it leaves the search to the skip list.</summary>
    public const int MaxChainWalk = 32;

    private readonly uint* _buckets;
    private readonly ulong _mask;
    private readonly byte** _slots;

    /// <summary>An index of <paramref name="bucketCount"/> buckets (a power of two) carved from <paramref name="arena"/>.</summary>
    public MemTableHashIndex(Arena arena, int bucketCount)
    {
        ArgumentNullException.ThrowIfNull(arena);
        if (bucketCount < MinBuckets || bucketCount > MaxBuckets || !int.IsPow2(bucketCount))
        {
            throw new ArgumentOutOfRangeException(nameof(bucketCount), bucketCount, $"A power of two from {MinBuckets} to {MaxBuckets}.");
        }
        // Zeroed without touching a new mapping: a bucket page is resident once a key hashes to it.
        _buckets = (uint*)arena.AllocateAlignedZeroed(bucketCount * sizeof(uint));
        _mask = (ulong)bucketCount - 1;
        _slots = arena.Slots;
    }

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
        double buckets = writeBufferSize * ratio / sizeof(uint);
        if (buckets <= MinBuckets)
        {
            return MinBuckets;
        }
        return buckets >= MaxBuckets ? MaxBuckets : (int)BitOperations.RoundUpToPowerOf2((uint)buckets);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ulong Hash(ReadOnlySpan<byte> userKey) => XxHash3.HashToUInt64(userKey);

    /// <summary>Warms the cache line of <paramref name="hash"/>'s bucket (a writer about to add).</summary>
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
    /// 0 of the skip list), or null when the memtable has none; false when the chain is too long to
    /// tell (<see cref="MaxChainWalk"/>). Any thread, lock-free.
    /// </summary>
    public bool TryFindNewest(ReadOnlySpan<byte> userKey, ulong hash, out byte* newest)
    {
        newest = null;
        ulong newestSequence = 0;
        uint id = Volatile.Read(ref _buckets[hash & _mask]);
        for (int walked = 0; id != 0; walked++)
        {
            if (walked == MaxChainWalk)
            {
                newest = null;
                return false;
            }
            byte* node = Arena.At(_slots, id);
            byte* entry = SkipList.EntryOfNode(node);
            ReadOnlySpan<byte> internalKey = MemTableEntry.InternalKey(entry);
            if (InternalKeys.UserKey(internalKey).SequenceEqual(userKey))
            {
                ulong sequence = InternalKeys.Sequence(internalKey);
                if (newest == null || sequence > newestSequence)
                {
                    newest = entry;
                    newestSequence = sequence;
                }
            }
            id = Volatile.Read(ref *SkipList.LinkOfNode(node));
        }
        return true;
    }

    /// <summary>Single writer: indexes skip-list node <paramref name="node"/> (its id), already linked into the list.</summary>
    public void Add(uint node, ulong hash)
    {
        uint* bucket = &_buckets[hash & _mask];
        *SkipList.LinkOfNode(Arena.At(_slots, node)) = *bucket;
        Volatile.Write(ref *bucket, node); // release: the entry and its link first
    }

    /// <summary><see cref="Add"/> for any number of writers at once.</summary>
    public void AddConcurrently(uint node, ulong hash)
    {
        ref uint bucket = ref _buckets[hash & _mask];
        uint* link = SkipList.LinkOfNode(Arena.At(_slots, node));
        uint head = Volatile.Read(ref bucket);
        while (true)
        {
            *link = head;
            uint seen = Interlocked.CompareExchange(ref bucket, node, head);
            if (seen == head)
            {
                return;
            }
            head = seen;
        }
    }
}
