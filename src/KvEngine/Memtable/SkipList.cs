using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics.X86;
using KvEngine.Format;

namespace KvEngine.Memtable;

/// <summary>
/// A sorted set of <see cref="MemTableEntry"/> entries, ordered by internal key
/// (<see cref="InternalKeyComparer.Compare"/>): LevelDB's db/skiplist.h with RocksDB's
/// InlineSkipList layout, every node living in an <see cref="Arena"/>.
/// <code>
/// Node  := level: Level[height - 1] // levels height-1 .. 1, highest first: level i at node - 4 - 16 * i
///          link: id(4)             // at node - 4: the owner's word (MemTableHashIndex chains entries through it);
///                                  // in a list without link words, padding above level 1, absent from a height-1 node
///          next0: id(4)            // at node: the next node at level 0 (a node's id names this word)
///          entry: MemTableEntry    // at node + 4, on the line of next0
/// Level := next: id(4)             // the next node at this level
///          padding(4)
///          bound: fixed64          // a lower bound of the next node's key prefix (KeyPrefix; 0 when unknown)
/// id    := Arena id(4)             // Arena.At(slots, id) is the address; 0 is null
/// </code>
/// Links are the arena's 32-bit ids, not pointers: 8 bytes fewer an entry (next0 and the link
/// word), at the price of one L1-resident table load per hop (Arena.At). A node with levels starts
/// 8-byte aligned, so its node address sits at 4 mod 8 and every bound is 8-byte aligned (the
/// concurrent writers' atomic minimum needs it); a height-1 node, three in four, starts 4-byte
/// aligned (its words are 4 bytes), which saves 2 bytes of padding an entry on average.
/// Level 0 has no bound: a search reads the key of its level-0 successor anyway (the answer of a
/// lookup, the duplicate check of an insert), and the entry stays beside next0 as in RocksDB.
/// The bound lets a search go down a level without touching the next node: a bound above the
/// target's prefix proves the next key larger. Invariant: a level's bound is at most the prefix of
/// the node its link names at any moment. Inserts only put smaller keys behind a link, so
/// the prefix behind a link never grows; the single writer stores the new node's prefix into the
/// bound before it publishes the link, concurrent writers lower the bound to at most their
/// node's prefix (an atomic minimum) before their compare-and-swap. A reader loads the link
/// (acquire), then the bound: whatever bound it sees is at most the prefix of that node or of a
/// newer, smaller one, so at most that node's. A new node's own bound is its predecessor's, copied
/// (a bound of the same successor), so no insert reads its successor's key for it.
/// The link word is not the list's: <see cref="LinkOfNode"/> hands it to the owner, which may use it to
/// chain entries into an index of its own once the entry is linked (the list never reads it). A list
/// built without link words (a memtable without a hash index, the range tombstones') leaves it out
/// of height-1 nodes, three in four of them: 4 bytes fewer each, and the level
/// offsets stay the same for every list.
/// Heights are drawn from a writer-owned xorshift PRNG: height h+1 with probability 1/branching of
/// height h, capped at the maximum height (LevelDB: branching 4, max height 12).
/// <para>
/// Thread-safety. Writes (<see cref="AllocateEntry"/>, <see cref="Insert(uint)"/>) require external
/// synchronization: one writer at a time, or several at once through the concurrent pair
/// (SkipList.Concurrent.cs), never both kinds at once. Reads require only that the arena outlive them (the
/// owning memtable's reference count guarantees it); apart from that they take no lock and never
/// wait. This is sound because of two invariants, as in LevelDB:
/// (1) nodes are never deleted or moved until the whole arena is freed;
/// (2) a node's contents other than its next links (and bounds) are immutable once it is linked.
/// Insert fills in the new node completely (entry bytes and its own next links, with plain
/// stores) before publishing it, and publishes it with a release store (Volatile.Write) into its
/// predecessor's next link. Readers load every next link with an acquire load (Volatile.Read),
/// so a reader that sees the new node also sees everything written into it before the publishing
/// store. Levels are linked bottom-up, so a reader that meets the node at level i finds it linked at
/// every level below i too; a reader still on the old link simply does not see the node yet.
/// An id is decodable before it is published: the arena fills its slot before handing out any id in it.
/// The current height is read without ordering: a reader that sees the new (larger) height before
/// the head's new levels finds id 0 (null) there, which sorts after every key, and drops a level;
/// otherwise it uses the new node. Either way it searches correctly.
/// </para>
/// <para>
/// Sequential inserts are O(1): the writer keeps a "splice" (the predecessor and successor at each
/// level of its last insert, RocksDB's InlineSkipList::Splice) and reuses it when the new key falls
/// in its level-0 gap. Duplicates (an equal internal key) are rejected.
/// </para>
/// </summary>
internal sealed unsafe partial class SkipList
{
    public const int DefaultMaxHeight = 12;
    public const int DefaultBranching = 4;
    public const int MaxHeightLimit = 32;

    // A level above 0: next id (padded to 8 bytes) and bound.
    private const int LevelSize = 16;

    // From a node (its next0 word) to its link word and its entry.
    private const int LinkOffset = -4;
    private const int EntryOffset = 4;

    /// <summary>
    /// Where a node's memory starts: 8-byte aligned with levels (their bounds are 8-byte words),
    /// 4-byte aligned without (only 4-byte words: link, next0).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int NodeAlignment(int height) => height > 1 ? Arena.Alignment : Arena.IdUnitBytes;

    /// <summary>Bytes of a node of <paramref name="height"/> levels before its entry: levels above 0, link (or its padding), next0.</summary>
    private int NodeBytes(int height) => (LevelSize * (height - 1)) + (_linkWords || height > 1 ? 8 : 4);

    private readonly Arena _arena;
    private readonly byte** _slots;
    private readonly byte* _head;
    private readonly uint _headId;
    private readonly int _maxHeight;
    private readonly uint _scaledInverseBranching;
    private readonly bool _linkWords;

    // Current height: written by the writer, read by readers without ordering (see header).
    private int _height = 1;

    // Writer-only state: PRNG and the splice of the last insert (levels 0.._spliceHeight,
    // level _spliceHeight being the (head, null) sentinel); _spliceHeight 0 means "none".
    private ulong _rngState;
    private readonly uint* _splicePrev;
    private readonly uint* _spliceNext;
    private int _spliceHeight;

    /// <param name="arena">Where nodes live.</param>
    /// <param name="maxHeight">Tallest node.</param>
    /// <param name="branching">1 in this many nodes of a height reaches the next.</param>
    /// <param name="seed">The height generator's seed.</param>
    /// <param name="linkWords">Give every node a link word for its owner (<see cref="LinkOfNode"/>).</param>
    public SkipList(Arena arena, int maxHeight = DefaultMaxHeight, int branching = DefaultBranching, ulong seed = 0xdeadbeef, bool linkWords = true)
    {
        ArgumentNullException.ThrowIfNull(arena);
        ArgumentOutOfRangeException.ThrowIfLessThan(maxHeight, 1);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(maxHeight, MaxHeightLimit);
        ArgumentOutOfRangeException.ThrowIfLessThan(branching, 2);
        _arena = arena;
        _linkWords = linkWords;
        _maxHeight = maxHeight;
        _scaledInverseBranching = (uint)(0x1_0000_0000UL / (uint)branching);
        _rngState = seed == 0 ? 0x9E3779B97F4A7C15UL : seed;

        _slots = arena.Slots;
        byte* headMemory = arena.AllocateAligned(NodeBytes(maxHeight), Arena.Alignment, out uint headMemoryId);
        _head = headMemory + NodeBytes(maxHeight) - EntryOffset;
        _headId = headMemoryId + (uint)((NodeBytes(maxHeight) - EntryOffset) / Arena.IdUnitBytes);
        for (int i = 0; i < maxHeight; i++)
        {
            SetNextNoBarrier(_head, i, 0);
            if (i > 0)
            {
                SetBoundNoBarrier(_head, i, 0);
            }
        }
        _splicePrev = (uint*)arena.AllocateAligned((maxHeight + 1) * sizeof(uint));
        _spliceNext = (uint*)arena.AllocateAligned((maxHeight + 1) * sizeof(uint));
    }

    public int MaxHeight => _maxHeight;

    /// <summary>The tallest node's height (at least 1). Any thread.</summary>
    public int Height => Volatile.Read(ref _height);

    /// <summary>
    /// Writer: reserves a node for an entry of <paramref name="entrySize"/> bytes (at most
    /// <see cref="MemTableEntry.MaxEncodedSize"/>) and returns where to write the entry. Pass
    /// <paramref name="node"/> to <see cref="Insert(uint)"/> once the entry is written.
    /// </summary>
    public byte* AllocateEntry(int entrySize, out uint node)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(entrySize);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(entrySize, MemTableEntry.MaxEncodedSize);
        int height = RandomHeight(ref _rngState);
        byte* memory = _arena.AllocateAligned(NodeBytes(height) + entrySize, NodeAlignment(height), out uint memoryId);
        return StashHeight(memory, memoryId, height, out node);
    }

    /// <summary>
    /// Stores the height in next[0] of the node at <paramref name="memory"/> until Insert links it;
    /// returns the entry's address and the node's id.
    /// </summary>
    private byte* StashHeight(byte* memory, uint memoryId, int height, out uint nodeId)
    {
        int nodeOffset = NodeBytes(height) - EntryOffset;
        byte* node = memory + nodeOffset;
        nodeId = memoryId + (uint)(nodeOffset / Arena.IdUnitBytes);
        *(uint*)node = (uint)height;
        if (_linkWords)
        {
            *(uint*)(node + LinkOffset) = 0; // the link word starts empty
        }
        return node + EntryOffset;
    }

    /// <summary>True when every node has a link word (<see cref="LinkOfNode"/>).</summary>
    public bool HasLinkWords => _linkWords;

    /// <summary>
    /// Writer: links the node whose entry was written (from <see cref="AllocateEntry"/>).
    /// False, and nothing linked, when an entry with an equal internal key is already present.
    /// </summary>
    public bool Insert(uint node) => Insert(node, out _);

    /// <summary>
    /// <see cref="Insert(uint)"/>; <paramref name="sharesUserKey"/> tells whether the entry's
    /// level-0 successor has the same user key (an older version of it: the single writer's
    /// sequences grow, so a key's new version lands just before its previous one). The successor's
    /// key is read anyway, for the duplicate check, so this costs no extra memory access.
    /// </summary>
    public bool Insert(uint nodeId, out bool sharesUserKey)
    {
        byte* node = At(nodeId);
        int height = (int)*(uint*)node;
        Debug.Assert(height >= 1 && height <= _maxHeight);
        ReadOnlySpan<byte> key = KeyOf(node);
        ulong prefix = KeyPrefix.OfInternalKey(key);

        int maxHeight = _height;
        if (height > maxHeight)
        {
            // Readers may see the new height before the new levels are linked: see header.
            Volatile.Write(ref _height, height);
            maxHeight = height;
        }

        uint* prev = _splicePrev;
        uint* next = _spliceNext;
        PositionSplice(key, prefix, prev, next, ref _spliceHeight, maxHeight);

        sharesUserKey = HasUserKeyOf(At(next[0]), _head, key, out bool duplicate);
        if (duplicate)
        {
            return false;
        }

        for (int level = 0; level < height; level++)
        {
            byte* before = At(prev[level]);
            Debug.Assert(NextIdNoBarrier(before, level) == next[level]);
            SetNextNoBarrier(node, level, next[level]);
            if (level > 0)
            {
                SetBoundNoBarrier(node, level, BoundOf(before, level)); // a bound of the same successor
                SetBoundNoBarrier(before, level, prefix); // before the link: see the header
            }
            SetNext(before, level, nodeId); // release: publishes the node (and the bound) at this level
            prev[level] = nodeId;
        }
        return true;
    }

    /// <summary>
    /// Makes the splice (prev, next; levels 0..spliceHeight, level spliceHeight the (head, null)
    /// sentinel) bracket <paramref name="key"/> at every level below <paramref name="maxHeight"/>.
    /// A splice lower than the list starts over from the sentinel. A key inside the splice's
    /// level-0 gap needs no search: the gaps nest (wider at higher levels), so it is inside every
    /// gap. Any other key searches from the top; climbing level by level instead costs random
    /// inserts up to two comparisons per level for little gain (RocksDB does the same). With
    /// concurrent writers the gaps may have been filled since; their compare-and-swap finds out.
    /// </summary>
    private void PositionSplice(ReadOnlySpan<byte> key, ulong prefix, uint* prev, uint* next, ref int spliceHeight, int maxHeight)
    {
        int recomputeHeight;
        if (spliceHeight < maxHeight)
        {
            prev[maxHeight] = _headId;
            next[maxHeight] = 0;
            spliceHeight = maxHeight;
            recomputeHeight = maxHeight;
        }
        else
        {
            byte* p = At(prev[0]);
            recomputeHeight = (p == _head || KeyIsAfterNode(key, p)) && !KeyIsAfterNode(key, At(next[0])) ? 0 : maxHeight;
        }
        for (int level = recomputeHeight - 1; level >= 0; level--)
        {
            FindSpliceForLevel(key, prefix, prev[level + 1], next[level + 1], level, out prev[level], out next[level]);
        }
    }

    /// <summary>Writer: encodes and inserts an internal key and a value (tests, cold paths).</summary>
    public bool Insert(ReadOnlySpan<byte> internalKey, ReadOnlySpan<byte> value)
    {
        if (internalKey.Length < InternalKeys.TrailerSize
            || !MemTableEntry.TryGetEncodedSize(internalKey.Length - InternalKeys.TrailerSize, value.Length, out int size))
        {
            throw new ArgumentException("The key or value is too long, or the key has no trailer.", nameof(internalKey));
        }
        byte* entry = AllocateEntry(size, out uint node);
        MemTableEntry.Encode(entry, InternalKeys.UserKey(internalKey), InternalKeys.Trailer(internalKey), value);
        return Insert(node);
    }

    /// <summary>True when an entry with an internal key equal to <paramref name="key"/> is present.</summary>
    public bool Contains(ReadOnlySpan<byte> key)
    {
        byte* node = FindGreaterOrEqualNode(key);
        return node != null && InternalKeyComparer.Compare(KeyOf(node), key) == 0;
    }

    /// <summary>The first entry whose key is &gt;= <paramref name="key"/>, or null.</summary>
    public byte* FindGreaterOrEqual(ReadOnlySpan<byte> key) => EntryOrNull(FindGreaterOrEqualNode(key));

    /// <summary>The last entry whose key is &lt; <paramref name="key"/>, or null.</summary>
    public byte* FindLessThan(ReadOnlySpan<byte> key) => EntryOrNull(FindLessNode(key, orEqual: false));

    /// <summary>The last entry whose key is &lt;= <paramref name="key"/>, or null.</summary>
    public byte* FindLessOrEqual(ReadOnlySpan<byte> key) => EntryOrNull(FindLessNode(key, orEqual: true));

    /// <summary>The last entry, or null when empty.</summary>
    public byte* FindLast() => EntryOrNull(FindLastNode());

    /// <summary>The first entry, or null when empty.</summary>
    public byte* First() => EntryOrNull(Next(_head, 0));

    /// <summary>
    /// The link word of the node at <paramref name="node"/> (<see cref="Arena.At"/> of its id): the
    /// owner's, zero until the owner writes it. The list neither reads nor writes it after
    /// <see cref="AllocateEntry"/>. Only for a list built with link words.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static uint* LinkOfNode(byte* node) => (uint*)(node + LinkOffset);

    /// <summary>The entry of the node at <paramref name="node"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static byte* EntryOfNode(byte* node) => node + EntryOffset;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private byte* At(uint id) => Arena.At(_slots, id);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private byte* EntryOrNull(byte* node) => node == null || node == _head ? null : node + EntryOffset;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ReadOnlySpan<byte> KeyOf(byte* node) => MemTableEntry.InternalKey(node + EntryOffset);

    /// <summary>
    /// True when <paramref name="node"/> is an entry (not null, not <paramref name="head"/>) with
    /// <paramref name="key"/>'s user key; <paramref name="duplicate"/> when its whole internal key is
    /// <paramref name="key"/> (the list's duplicate check: the comparator is bytewise).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool HasUserKeyOf(byte* node, byte* head, ReadOnlySpan<byte> key, out bool duplicate)
    {
        duplicate = false;
        if (node == null || node == head)
        {
            return false;
        }
        ReadOnlySpan<byte> nodeKey = KeyOf(node);
        if (!InternalKeys.UserKey(nodeKey).SequenceEqual(InternalKeys.UserKey(key)))
        {
            return false;
        }
        duplicate = InternalKeys.Trailer(nodeKey) == InternalKeys.Trailer(key);
        return true;
    }

    /// <summary>True when <paramref name="node"/> is not null and its key is &lt; <paramref name="key"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool KeyIsAfterNode(ReadOnlySpan<byte> key, byte* node) =>
        node != null && InternalKeyComparer.Compare(KeyOf(node), key) < 0;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static uint* LevelOf(byte* node, int level) => (uint*)(level == 0 ? node : node - 4 - (level * LevelSize));

    /// <summary>The next node at <paramref name="level"/> (acquire), null at the end.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private byte* Next(byte* node, int level) => At(NextId(node, level));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static uint NextId(byte* node, int level) => Volatile.Read(ref *LevelOf(node, level));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void SetNext(byte* node, int level, uint id) => Volatile.Write(ref *LevelOf(node, level), id);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static uint NextIdNoBarrier(byte* node, int level) => *LevelOf(node, level);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void SetNextNoBarrier(byte* node, int level, uint id) => *LevelOf(node, level) = id;

    /// <summary>The bound of a level above 0 (see the header); read it after the level's pointer.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong BoundOf(byte* node, int level) => *BoundSlot(node, level);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void SetBoundNoBarrier(byte* node, int level, ulong bound) => *BoundSlot(node, level) = bound;

    /// <summary>Where a level above 0 keeps its bound: the 8-byte word after its next id and padding.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong* BoundSlot(byte* node, int level) => (ulong*)((byte*)LevelOf(node, level) + 8);

    /// <summary>
    /// True when the node after <paramref name="node"/> at <paramref name="level"/> (just loaded
    /// from it) is known to sort after every key with prefix <paramref name="prefix"/>, without
    /// touching that node.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool NextIsPast(byte* node, int level, ulong prefix) => level != 0 && BoundOf(node, level) > prefix;

    /// <summary>Walks one level from <paramref name="before"/> (whose key is &lt; key), stopping at <paramref name="after"/>.</summary>
    private void FindSpliceForLevel(ReadOnlySpan<byte> key, ulong prefix, uint before, uint after, int level, out uint outPrev, out uint outNext)
    {
        byte* beforeNode = At(before);
        while (true)
        {
            uint next = NextId(beforeNode, level);
            if (next == after || next == 0 || NextIsPast(beforeNode, level, prefix))
            {
                outPrev = before;
                outNext = next;
                return;
            }
            byte* nextNode = At(next);
            if (Sse.IsSupported)
            {
                // RocksDB's InlineSkipList prefetches next->Next(level): the node this walk visits
                // after next, whose key line then loads while next's key is compared.
                Sse.Prefetch0(At(NextIdNoBarrier(nextNode, level)) + EntryOffset);
            }
            if (!KeyIsAfterNode(key, nextNode))
            {
                outPrev = before;
                outNext = next;
                return;
            }
            before = next;
            beforeNode = nextNode;
        }
    }

    private byte* FindGreaterOrEqualNode(ReadOnlySpan<byte> key)
    {
        ulong prefix = KeyPrefix.OfInternalKey(key);
        byte* x = _head;
        int level = Height - 1;
        byte* knownNotBefore = null; // a node already known >= key: skip re-comparing it one level down
        while (true)
        {
            byte* next = Next(x, level);
            if (next != null && next != knownNotBefore && !NextIsPast(x, level, prefix) && InternalKeyComparer.Compare(KeyOf(next), key) < 0)
            {
                x = next;
            }
            else
            {
                if (level == 0)
                {
                    return next;
                }
                knownNotBefore = next;
                level--;
            }
        }
    }

    /// <summary>The last node with key &lt; (or &lt;= when <paramref name="orEqual"/>) key; the head when none.</summary>
    private byte* FindLessNode(ReadOnlySpan<byte> key, bool orEqual)
    {
        int bound = orEqual ? 1 : 0;
        ulong prefix = KeyPrefix.OfInternalKey(key);
        byte* x = _head;
        int level = Height - 1;
        byte* knownNotBefore = null;
        while (true)
        {
            byte* next = Next(x, level);
            if (next != null && next != knownNotBefore && !NextIsPast(x, level, prefix) && InternalKeyComparer.Compare(KeyOf(next), key) < bound)
            {
                x = next;
            }
            else
            {
                if (level == 0)
                {
                    return x;
                }
                knownNotBefore = next;
                level--;
            }
        }
    }

    /// <summary>The last node; the head when empty.</summary>
    private byte* FindLastNode()
    {
        byte* x = _head;
        int level = Height - 1;
        while (true)
        {
            byte* next = Next(x, level);
            if (next != null)
            {
                x = next;
            }
            else if (level == 0)
            {
                return x;
            }
            else
            {
                level--;
            }
        }
    }

    /// <summary>A node height drawn from the PRNG whose state is <paramref name="state"/> (never 0).</summary>
    private int RandomHeight(ref ulong state)
    {
        int height = 1;
        while (height < _maxHeight && NextRandom(ref state) < _scaledInverseBranching)
        {
            height++;
        }
        return height;
    }

    // xorshift64*: the high 32 bits of the product are well mixed.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static uint NextRandom(ref ulong state)
    {
        ulong x = state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        state = x;
        return (uint)((x * 0x2545F4914F6CDD1DUL) >> 32);
    }

    /// <summary>
    /// A cursor over the list. A struct: embed it (in a mutable field) rather than copy it. Safe to
    /// use concurrently with the writer; one user per cursor.
    /// </summary>
    internal struct Iterator
    {
        private readonly SkipList _list;
        private readonly byte** _slots;
        private byte* _node;

        public Iterator(SkipList list)
        {
            _list = list;
            _slots = list._slots;
            _node = null;
        }

        public readonly bool Valid => _node != null;

        /// <summary>The current entry (a <see cref="MemTableEntry"/>). Requires Valid.</summary>
        public readonly byte* Entry
        {
            [MethodImpl(MethodImplOptions.AggressiveInlining)]
            get
            {
                Debug.Assert(_node != null);
                return _node + EntryOffset;
            }
        }

        public readonly ReadOnlySpan<byte> Key => MemTableEntry.InternalKey(Entry);

        public readonly ReadOnlySpan<byte> Value => MemTableEntry.Value(Entry);

        public void Next()
        {
            Debug.Assert(_node != null);
            byte* node = Arena.At(_slots, NextId(_node, 0));
            _node = node;
            if (node != null && Sse.IsSupported)
            {
                // A scan walks level 0, one dependent cache miss per node: start loading the node
                // after this one now, so its miss overlaps the caller's work on this entry. Three
                // lines of it: an entry of a 16-byte key and a 100-byte value spans two or three,
                // and a flush copies all of it (a 64 MiB memtable's flush: 207 -> 179 ms of CPU
                // with the second and third lines; a prefetch never faults, past an arena block
                // or at null).
                byte* after = Arena.At(_slots, NextIdNoBarrier(node, 0));
                Sse.Prefetch0(after);
                Sse.Prefetch0(after + 64);
                Sse.Prefetch0(after + 128);
            }
        }

        /// <summary>Steps back: a search for the last node before this one (no back pointers).</summary>
        public void Prev()
        {
            Debug.Assert(_node != null);
            _node = _list.NodeOrNull(_list.FindLessNode(KeyOf(_node), orEqual: false));
        }

        public void Seek(ReadOnlySpan<byte> target) => _node = _list.FindGreaterOrEqualNode(target);

        /// <summary>Positions the cursor at <paramref name="entry"/>, an entry linked into this list.</summary>
        public void SeekToEntry(byte* entry)
        {
            Debug.Assert(entry != null);
            _node = entry - EntryOffset;
        }

        public void SeekForPrev(ReadOnlySpan<byte> target) => _node = _list.NodeOrNull(_list.FindLessNode(target, orEqual: true));

        public void SeekToFirst() => _node = _list.Next(_list._head, 0);

        public void SeekToLast() => _node = _list.NodeOrNull(_list.FindLastNode());

        /// <summary>Leaves the cursor not Valid.</summary>
        public void Reset() => _node = null;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private byte* NodeOrNull(byte* node) => node == _head ? null : node;
}
