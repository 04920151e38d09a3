namespace KvEngine.Cache;

/// <summary>State bits of an <see cref="LruEntry"/>. In memory only.</summary>
[Flags]
internal enum LruEntryFlags : byte
{
    None = 0,

    /// <summary>In its shard's table (not erased, evicted or replaced).</summary>
    InCache = 1,

    /// <summary>In the high-priority LRU list.</summary>
    InHighPool = 2,

    /// <summary>Offer the value to the secondary cache when it is freed.</summary>
    Demote = 4,

    /// <summary>Inserted at high priority (set once).</summary>
    HighPriority = 8,

    /// <summary>The value is a native block held in the entry (set once).</summary>
    NativeBlock = 16,

    /// <summary>The value is a native record its cache's <see cref="INativeValueOwner"/> frees (set once).</summary>
    NativeValue = 32,

    /// <summary>
    /// The entry lives in the spare tail of its native block's allocation, not an allocation of its
    /// own; freeing the block frees it (set once, with <see cref="NativeBlock"/>).
    /// </summary>
    InBlock = 64,
}
