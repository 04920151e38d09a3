using System.Runtime.InteropServices;

namespace KvEngine.Cache;

/// <summary>
/// One cache entry in native memory (RocksDB's LRUHandle), 64 bytes from the cache's
/// <see cref="Memory.NativeAllocator"/> (<see cref="Memory.NativeUse.CacheEntry"/>; RocksDB 7.8's
/// handle with its key takes ~88), so a cache of ~90,000 blocks keeps no managed object per entry.
/// A native block's entry lives in the spare tail of the block's own allocation when its size
/// class leaves room (<see cref="LruEntryFlags.InBlock"/>; most data blocks, which end a little
/// short of the block size): no allocation of its own, freed with the block.
/// The value is either a native block whose bytes the entry owns (<see cref="LruEntryFlags.NativeBlock"/>:
/// <see cref="Value"/> is the buffer's address), a native record the cache's
/// <see cref="INativeValueOwner"/> frees (<see cref="LruEntryFlags.NativeValue"/>: a compressed
/// secondary cache entry), a managed <see cref="CacheValue"/> held through a strong GC handle
/// (<see cref="Value"/> is the handle), or nothing (a secondary cache's placeholder: 0).
/// <code>
/// LruEntry := owner: u64 offset: u64 prev: ptr next: ptr next_hash: ptr value: ptr
///             charge: i32 length: i32 refs: i32 role: u8 flags: u8 data_use: u8 pad: u8
///             [entry_tag: i64 data_tag: i64]   // only from an allocator with debug checks
/// </code>
/// A native block's restart array is parsed again (a read of its last word) by each view.
/// Invariants: the key, value fields, charge and <see cref="LruEntryFlags.HighPriority"/> are set
/// before the entry is published under its shard's lock and never change until it is freed; the
/// links, refs and the other flags are guarded by the shard's lock. Not thread-safe by itself.
/// In memory only (never persisted).
/// </summary>
[StructLayout(LayoutKind.Sequential)]
internal unsafe struct LruEntry
{
    public ulong OwnerId;
    public ulong Offset;
    public LruEntry* Prev;
    public LruEntry* Next;
    public LruEntry* NextHash; // the next entry in its LruHandleTable bucket
    public nint Value; // a native block's bytes (owned by the entry), a native record, the GCHandle of a managed value, or 0
    public int Charge;
    public int Length; // a native block's bytes
    public int Refs;
    public byte Role;
    public LruEntryFlags Flags;
    public byte DataUse; // the NativeUse a native block's buffer is counted as
    private readonly byte _pad;

    public readonly CacheKey Key => new(OwnerId, Offset);

    public readonly bool Has(LruEntryFlags flag) => (Flags & flag) != 0;

    public void Set(LruEntryFlags flag, bool on) => Flags = on ? Flags | flag : Flags & ~flag;
}
