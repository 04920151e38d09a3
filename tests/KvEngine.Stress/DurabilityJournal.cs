using System.Buffers.Binary;
using System.IO.MemoryMappedFiles;

namespace KvEngine.Stress;

/// <summary>
/// The <see cref="DurabilityTracker"/>'s state in a memory-mapped file (DURABILITY_JOURNAL beside
/// EXPECTED_STATE, kvstress -durability_journal), so a process killed at a power cut leaves the
/// next one everything its verification needs: the logical clock, the durability watermark and one
/// record per write (key, the key's state before the cycle, the new state, start and acknowledgement
/// ticks, operation, synced). The file is outside the file system that loses power and is written
/// through a shared mapping, so a SIGKILL keeps every store (the page cache owns the pages).
/// <para>
/// A record is filled before the database call and marked valid last; the acknowledgement tick and
/// the synced flag are stored after the call returned. A process killed in between leaves the
/// write unacknowledged (it may or may not have happened), and a record without its valid mark is
/// a write whose database call never started. Records of one key are written by its owning thread
/// in order, so slot order is the key's history order.
/// </para>
/// <para>
/// Layout: 64-byte header ("KVDURJNL", version 1, threads, clock, watermark, operation ids, record
/// count, capacity, epoch; little-endian), then <see cref="RecordSize"/>-byte records. Thread-safety: the
/// counters are updated atomically; a record is written only by the thread that reserved it.
/// </para>
/// </summary>
internal sealed unsafe class DurabilityJournal : IDisposable
{
    public const string FileName = "DURABILITY_JOURNAL";
    public const int RecordSize = 48;
    private const int HeaderSize = 64;
    private const long DefaultCapacity = 1 << 21;
    private const ulong Magic = 0x4C4E_4A52_5544_564B; // "KVDURJNL" little-endian
    private const int ValidFlag = 1, SyncedFlag = 2, MultiKeyFlag = 4, EpochShift = 3, EpochMask = (1 << 28) - 1;

    private readonly MemoryMappedFile _file;
    private readonly MemoryMappedViewAccessor _view;
    private readonly byte* _base;
    private readonly long _capacity;

    private DurabilityJournal(MemoryMappedFile file, MemoryMappedViewAccessor view, long capacity)
    {
        _file = file;
        _view = view;
        _capacity = capacity;
        byte* p = null;
        view.SafeMemoryMappedViewHandle.AcquirePointer(ref p);
        _base = p + view.PointerOffset;
    }

    public ref long Clock => ref *(long*)(_base + 16);

    public ref long Watermark => ref *(long*)(_base + 24);

    public ref long OpIds => ref *(long*)(_base + 32);

    private ref long Count => ref *(long*)(_base + 40);

    // Bumped by every reset; a record is valid only with the current epoch in its flags, so a slot
    // reserved by a killed writer but never filled cannot show an older epoch's record.
    private ref int Epoch => ref *(int*)(_base + 56);

    /// <summary>Opens or creates the journal in <paramref name="dir"/>; <paramref name="reset"/> starts it empty.</summary>
    public static DurabilityJournal Open(string dir, int threads, bool reset)
    {
        string path = Path.Combine(dir, FileName);
        long size = HeaderSize + (DefaultCapacity * RecordSize);
        bool exists = File.Exists(path) && !reset;
        if (exists)
        {
            var h = new byte[HeaderSize];
            using (FileStream fs = File.OpenRead(path))
            {
                if (fs.Length != size || fs.ReadAtLeast(h, HeaderSize, throwOnEndOfStream: false) != HeaderSize
                    || BinaryPrimitives.ReadUInt64LittleEndian(h) != Magic || BinaryPrimitives.ReadInt32LittleEndian(h.AsSpan(8)) != 1)
                {
                    throw new ArgumentException($"{path} is not a kvstress durability journal; use -destroy_db_initially=1 to start over");
                }
            }
            int fileThreads = BinaryPrimitives.ReadInt32LittleEndian(h.AsSpan(12));
            if (fileThreads != threads)
            {
                throw new ArgumentException($"{path} was written with -threads={fileThreads}, not {threads} (key histories are kept per thread)");
            }
        }
        else if (File.Exists(path))
        {
            File.Delete(path);
        }
        MemoryMappedFile file = MemoryMappedFile.CreateFromFile(path, FileMode.OpenOrCreate, null, size, MemoryMappedFileAccess.ReadWrite);
        var journal = new DurabilityJournal(file, file.CreateViewAccessor(0, size), DefaultCapacity);
        if (!exists)
        {
            var h = new Span<byte>(journal._base, HeaderSize);
            BinaryPrimitives.WriteUInt64LittleEndian(h, Magic);
            BinaryPrimitives.WriteInt32LittleEndian(h[8..], 1);
            BinaryPrimitives.WriteInt32LittleEndian(h[12..], threads);
            BinaryPrimitives.WriteInt64LittleEndian(h[48..], DefaultCapacity);
        }
        return journal;
    }

    /// <summary>Writes a record for a write about to start; returns its slot.</summary>
    public long Append(int thread, long key, ExpectedValue initial, in HistoryEntry entry, bool multiKey)
    {
        long slot = Interlocked.Increment(ref Count) - 1;
        if (slot >= _capacity)
        {
            throw new InvalidOperationException($"the durability journal is full ({_capacity} writes since the last verification); restart kvstress more often");
        }
        byte* r = Record(slot);
        *(long*)r = key;
        *(long*)(r + 8) = entry.Start;
        *(long*)(r + 16) = entry.Ack;
        *(long*)(r + 24) = entry.OpId;
        *(uint*)(r + 32) = initial.Raw;
        *(uint*)(r + 36) = entry.Value.Raw;
        *(int*)(r + 40) = thread;
        Volatile.Write(ref *(int*)(r + 44), (Epoch << EpochShift) | ValidFlag | (entry.Synced ? SyncedFlag : 0) | (multiKey ? MultiKeyFlag : 0));
        return slot;
    }

    /// <summary>The write in <paramref name="slot"/> was acknowledged at <paramref name="ack"/>.</summary>
    public void Acknowledge(long slot, long ack, bool synced)
    {
        byte* r = Record(slot);
        Volatile.Write(ref *(long*)(r + 16), ack);
        if (synced)
        {
            Volatile.Write(ref *(int*)(r + 44), *(int*)(r + 44) | SyncedFlag);
        }
    }

    /// <summary>Every valid record in slot order: (thread, key, initial state, entry, multi-key).</summary>
    public IEnumerable<(int Thread, long Key, ExpectedValue Initial, HistoryEntry Entry, bool MultiKey)> Records()
    {
        long n = Math.Min(Volatile.Read(ref Count), _capacity);
        for (long slot = 0; slot < n; slot++)
        {
            yield return Read(slot);
        }
    }

    /// <summary>Forgets every record: what the verification found is the new durable base.</summary>
    public void Reset()
    {
        Volatile.Write(ref Count, 0); // first: with no records the epoch and watermark do not matter
        Volatile.Write(ref Epoch, (Epoch + 1) & EpochMask);
        Volatile.Write(ref Watermark, Volatile.Read(ref Clock));
    }

    public void Dispose()
    {
        _view.Flush();
        _view.SafeMemoryMappedViewHandle.ReleasePointer();
        _view.Dispose();
        _file.Dispose();
    }

    private byte* Record(long slot) => _base + HeaderSize + (slot * RecordSize);

    private (int, long, ExpectedValue, HistoryEntry, bool) Read(long slot)
    {
        byte* r = Record(slot);
        int flags = Volatile.Read(ref *(int*)(r + 44));
        if ((flags & ValidFlag) == 0 || (flags >>> EpochShift) != Epoch)
        {
            return (-1, 0, default, default, false);
        }
        var entry = new HistoryEntry(new ExpectedValue(*(uint*)(r + 36)), *(long*)(r + 8), *(long*)(r + 16), *(long*)(r + 24), (flags & SyncedFlag) != 0);
        return (*(int*)(r + 40), *(long*)r, new ExpectedValue(*(uint*)(r + 32)), entry, (flags & MultiKeyFlag) != 0);
    }
}
