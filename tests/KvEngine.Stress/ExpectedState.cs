using System.Buffers.Binary;
using System.IO.MemoryMappedFiles;

namespace KvEngine.Stress;

/// <summary>
/// Every key's expected state (RocksDB db_stress's ExpectedState), in a memory-mapped file under
/// -expected_values_dir (so it survives a SIGKILL of the process exactly as the OS page cache does)
/// or in memory. Per key two 32-bit <see cref="ExpectedValue"/> slots: "committed" (the state
/// after the last acknowledged write) and "pending" (the new state of a write in flight, with the
/// pending bit). Protocol: <see cref="BeginWrite"/> BEFORE the database operation,
/// <see cref="CommitWrite"/> after it returned; after a crash a key with a pending slot may hold
/// either state, every other key exactly the committed one.
/// <para>
/// Layout: 64-byte header ("KVSTRESS", version 1, max_key, value_size_mult), then 8 bytes per key
/// (committed, pending; little-endian). Thread-safety: a key's slots are written only by the thread
/// owning its stripe; readers of other stripes use volatile reads and tolerate concurrent change.
/// </para>
/// </summary>
internal sealed unsafe class ExpectedState : IDisposable
{
    private const int HeaderSize = 64;
    private const ulong Magic = 0x5353_4552_5453_564B; // "KVSTRESS" little-endian

    private readonly MemoryMappedFile? _file;
    private readonly MemoryMappedViewAccessor? _view;
    private readonly byte* _base;
    private readonly uint* _slots;
    private readonly byte[]? _memory;
    private readonly System.Runtime.InteropServices.GCHandle _pin;

    private ExpectedState(long maxKey, MemoryMappedFile? file, MemoryMappedViewAccessor? view, byte[]? memory)
    {
        MaxKey = maxKey;
        _file = file;
        _view = view;
        _memory = memory;
        if (view != null)
        {
            byte* p = null;
            view.SafeMemoryMappedViewHandle.AcquirePointer(ref p);
            _base = p + view.PointerOffset;
        }
        else
        {
            _pin = System.Runtime.InteropServices.GCHandle.Alloc(memory, System.Runtime.InteropServices.GCHandleType.Pinned);
            _base = (byte*)_pin.AddrOfPinnedObject();
        }
        _slots = (uint*)(_base + HeaderSize);
    }

    public long MaxKey { get; }

    /// <summary>Whether the state was just created (every key absent) rather than loaded.</summary>
    public bool Fresh { get; private set; }

    /// <summary>
    /// Opens (or creates) the state file in <paramref name="dir"/>, or an in-memory state when
    /// <paramref name="dir"/> is empty. A file made for another -max_key or -value_size_mult is an
    /// error unless <paramref name="reset"/>.
    /// </summary>
    public static ExpectedState Open(string dir, long maxKey, int valueSizeMult, bool reset)
    {
        long size = HeaderSize + (maxKey * 8);
        if (dir.Length == 0)
        {
            var mem = new ExpectedState(maxKey, null, null, new byte[size]) { Fresh = true };
            mem.WriteHeader(valueSizeMult);
            return mem;
        }
        Directory.CreateDirectory(dir);
        string path = Path.Combine(dir, "EXPECTED_STATE");
        bool exists = File.Exists(path) && !reset;
        if (exists)
        {
            CheckHeader(path, maxKey, valueSizeMult, size);
        }
        else if (File.Exists(path))
        {
            File.Delete(path);
        }
        MemoryMappedFile file = MemoryMappedFile.CreateFromFile(path, FileMode.OpenOrCreate, null, size, MemoryMappedFileAccess.ReadWrite);
        var state = new ExpectedState(maxKey, file, file.CreateViewAccessor(0, size), null) { Fresh = !exists };
        if (!exists)
        {
            state.WriteHeader(valueSizeMult);
            state._view!.Flush();
        }
        return state;
    }

    public ExpectedValue Committed(long key) => new(Volatile.Read(ref _slots[key * 2]));

    public ExpectedValue PendingSlot(long key) => new(Volatile.Read(ref _slots[(key * 2) + 1]));

    /// <summary>The next state of <paramref name="key"/> for a Put (<paramref name="exists"/>) or a delete.</summary>
    public ExpectedValue Next(long key, bool exists)
    {
        uint b = (Math.Max(Committed(key).Base, PendingSlot(key).Base) + 1) & ExpectedValue.BaseMask;
        return exists ? ExpectedValue.Put(b) : ExpectedValue.Deleted(b);
    }

    /// <summary>Marks a write of <paramref name="next"/> to <paramref name="key"/> as in flight; call before the database operation.</summary>
    public void BeginWrite(long key, ExpectedValue next) => Volatile.Write(ref _slots[(key * 2) + 1], next.Raw | ExpectedValue.PendingBit);

    /// <summary>The write to <paramref name="key"/> was acknowledged: it is now the committed state.</summary>
    public void CommitWrite(long key, ExpectedValue next)
    {
        Volatile.Write(ref _slots[key * 2], next.Settled.Raw);
        Volatile.Write(ref _slots[(key * 2) + 1], 0);
    }

    /// <summary>Sets the committed state to what verification found and clears the pending slot.</summary>
    public void Resolve(long key, ExpectedValue found) => CommitWrite(key, found);

    /// <summary>
    /// Like <see cref="Resolve(long, ExpectedValue)"/>, but later writes take bases above
    /// <paramref name="usedBase"/> (kept in the pending slot without the pending bit), so a write
    /// that was lost cannot be mistaken for a later one.
    /// </summary>
    public void Resolve(long key, ExpectedValue found, uint usedBase)
    {
        Volatile.Write(ref _slots[key * 2], found.Settled.Raw);
        Volatile.Write(ref _slots[(key * 2) + 1], ExpectedValue.Deleted(usedBase).Raw);
    }

    public void Dispose()
    {
        if (_view != null)
        {
            _view.Flush();
            _view.SafeMemoryMappedViewHandle.ReleasePointer();
            _view.Dispose();
            _file!.Dispose();
        }
        else if (_pin.IsAllocated)
        {
            _pin.Free();
        }
        GC.KeepAlive(_memory);
    }

    private void WriteHeader(int valueSizeMult)
    {
        var h = new Span<byte>(_base, HeaderSize);
        BinaryPrimitives.WriteUInt64LittleEndian(h, Magic);
        BinaryPrimitives.WriteInt32LittleEndian(h[8..], 1);
        BinaryPrimitives.WriteInt64LittleEndian(h[12..], MaxKey);
        BinaryPrimitives.WriteInt32LittleEndian(h[20..], valueSizeMult);
    }

    private static void CheckHeader(string path, long maxKey, int valueSizeMult, long size)
    {
        var h = new byte[HeaderSize];
        using (FileStream fs = File.OpenRead(path))
        {
            if (fs.Length != size || fs.ReadAtLeast(h, HeaderSize, throwOnEndOfStream: false) != HeaderSize)
            {
                throw new ArgumentException($"{path} has {fs.Length} bytes, not the {size} of -max_key={maxKey}; use -destroy_db_initially=1 to start over");
            }
        }
        if (BinaryPrimitives.ReadUInt64LittleEndian(h) != Magic || BinaryPrimitives.ReadInt32LittleEndian(h.AsSpan(8)) != 1)
        {
            throw new ArgumentException($"{path} is not a kvstress expected-state file");
        }
        long fileMaxKey = BinaryPrimitives.ReadInt64LittleEndian(h.AsSpan(12));
        int fileMult = BinaryPrimitives.ReadInt32LittleEndian(h.AsSpan(20));
        if (fileMaxKey != maxKey || fileMult != valueSizeMult)
        {
            throw new ArgumentException($"{path} was made with -max_key={fileMaxKey} -value_size_mult={fileMult}, not {maxKey} and {valueSizeMult}; use -destroy_db_initially=1 to start over");
        }
    }
}
