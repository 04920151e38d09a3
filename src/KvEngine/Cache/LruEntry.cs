using System.Runtime.InteropServices;

namespace KvEngine.Cache;

/// <summary>
/// One cache entry in native memory (RocksDB's LRUHandle), 96 bytes from the cache's
/// <see cref="Memory.NativeAllocator"/> (<see cref="Memory.NativeUse.CacheEntry"/>), so a cache of
/// ~90,000 blocks keeps no managed object per entry. The value is either a native block whose
/// bytes and parsed restart array the entry holds itself (<see cref="LruEntryFlags.NativeBlock"/>:
/// <see cref="Data"/> is an allocation the entry owns), a managed <see cref="CacheValue"/> held
/// through a strong GC handle (<see cref="Managed"/>), or nothing (a secondary cache's
/// placeholder: neither).
/// <code>
/// LruEntry := owner: u64 offset: u64 prev: ptr next: ptr next_hash: ptr managed: ptr data: ptr
///             data_tag: i64 entry_tag: i64 charge: i32 length: i32 restarts_offset: i32
///             num_restarts: i32 refs: i32 role: u8 flags: u8 pad: u16
/// </code>
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
    public nint Managed; // GCHandle of a managed value; 0 for a native block or a placeholder
    public byte* Data; // a native block's bytes (owned by the entry)
    public long DataTag; // the allocator tag of Data's buffer
    public long EntryTag; // the allocator tag of this entry's own allocation
    public int Charge;
    public int Length; // a native block's bytes
    public int RestartsOffset;
    public int NumRestarts;
    public int Refs;
    public byte Role;
    public LruEntryFlags Flags;
    private readonly ushort _pad;

    public readonly CacheKey Key => new(OwnerId, Offset);

    public readonly bool Has(LruEntryFlags flag) => (Flags & flag) != 0;

    public void Set(LruEntryFlags flag, bool on) => Flags = on ? Flags | flag : Flags & ~flag;
}
