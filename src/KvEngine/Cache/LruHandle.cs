using System.Runtime.InteropServices;
using KvEngine.Memory;

namespace KvEngine.Cache;

/// <summary>
/// A reference to one <see cref="LruEntry"/>, the handle a lookup or insert returns. Its key,
/// charge, role and value are fixed while the entry lives and read without the shard's lock; a
/// holder may use them until it releases the handle (<see cref="LruCache.Release"/>), exactly once,
/// and not after: the entry's memory goes back to the allocator when its last reference is
/// released after it left the cache. An 8-byte value; copies refer to the same entry.
/// </summary>
internal readonly unsafe struct LruHandle : IEquatable<LruHandle>
{
    internal LruHandle(LruEntry* entry)
    {
        Entry = entry;
    }

    internal LruEntry* Entry { get; }

    public CacheKey Key => Entry->Key;

    /// <summary>Usable bytes of the value plus the entry overhead.</summary>
    public long Charge => Entry->Charge;

    public bool HighPriority => Entry->Has(LruEntryFlags.HighPriority);

    public CacheEntryRole Role => (CacheEntryRole)Entry->Role;

    /// <summary>True when the value is a native block held in the entry (read it with <see cref="BlockData"/>); false for a managed <see cref="Value"/>.</summary>
    public bool IsNativeBlock => Entry->Has(LruEntryFlags.NativeBlock);

    /// <summary>True when the value is a native record (read it with <see cref="NativeValue"/>).</summary>
    public bool IsNativeValue => Entry->Has(LruEntryFlags.NativeValue);

    /// <summary>A native record's address (only when <see cref="IsNativeValue"/>).</summary>
    public nint NativeValue => Entry->Value;

    /// <summary>True for a placeholder: an entry with no value.</summary>
    public bool IsPlaceholder => (Entry->Flags & (LruEntryFlags.NativeBlock | LruEntryFlags.NativeValue)) == 0 && Entry->Value == 0;

    /// <summary>The managed value (a placeholder's is <see cref="CachePlaceholder.Instance"/>); throws for a native block or record.</summary>
    public CacheValue Value
    {
        get
        {
            LruEntry* e = Entry;
            if ((e->Flags & (LruEntryFlags.NativeBlock | LruEntryFlags.NativeValue)) != 0)
            {
                throw new InvalidOperationException($"Cache entry {e->Key} holds a native value, not a managed one.");
            }
            return e->Value == 0 ? CachePlaceholder.Instance : (CacheValue)GCHandle.FromIntPtr(e->Value).Target!;
        }
    }

    /// <summary>A native block's bytes (only when <see cref="IsNativeBlock"/>).</summary>
    public byte* BlockData => (byte*)Entry->Value;

    public int BlockLength => Entry->Length;

    /// <summary>Bytes the value asked its allocator for.</summary>
    public long RequestedBytes =>
        IsNativeBlock ? Entry->Length : IsNativeValue ? *(int*)Entry->Value : Value.RequestedBytes;

    /// <summary>Usable bytes of the value's allocations.</summary>
    public long AllocatedBytes =>
        IsNativeBlock ? NativeBlockAllocatedBytes : IsNativeValue ? *(int*)(Entry->Value + 4) : Value.AllocatedBytes;

    /// <summary>A native block's usable bytes, less the entry when the entry lives in its tail.</summary>
    private long NativeBlockAllocatedBytes => Entry->Has(LruEntryFlags.InBlock)
        ? (byte*)Entry - (byte*)Entry->Value
        : SizeClasses.UsableSize(Entry->Length);

    public bool Equals(LruHandle other) => Entry == other.Entry;

    public override bool Equals(object? obj) => obj is LruHandle h && Equals(h);

    public override int GetHashCode() => ((nint)Entry).GetHashCode();

    public override string ToString() => $"LruHandle({Entry->Key})";
}
