using System.Runtime.InteropServices;

namespace KvEngine.Memory;

/// <summary>
/// Anonymous page mappings straight from the kernel (mmap/munmap in glibc's libc.so.6), for the
/// allocator's largest blocks: memtable arena blocks, whole filters. Through malloc those go back
/// to glibc's heaps when freed but stay resident there (malloc raises its mapping threshold after
/// the first large free, then serves such sizes from per-thread heaps it rarely trims); measured
/// with kvbench -threads=2, that kept ~90 MB of freed memtables in the resident set. A mapping
/// is returned to the kernel at once. Where libc.so.6 is not there (not Linux with glibc),
/// <see cref="IsSupported"/> is false and the caller keeps using NativeMemory. Thread-safe.
/// </summary>
internal static unsafe class PageMemory
{
    private const int ProtRead = 0x1;
    private const int ProtWrite = 0x2;
    private const int MapPrivate = 0x02;
    private const int MapAnonymous = 0x20; // Linux's value

    private static readonly delegate* unmanaged<void*, nuint, int, int, int, nint, void*> s_mmap;
    private static readonly delegate* unmanaged<void*, nuint, int> s_munmap;

    static PageMemory()
    {
        if (!OperatingSystem.IsLinux() || !NativeLibrary.TryLoad("libc.so.6", out nint libc))
        {
            return;
        }
        if (NativeLibrary.TryGetExport(libc, "mmap", out nint mmap) && NativeLibrary.TryGetExport(libc, "munmap", out nint munmap))
        {
            s_mmap = (delegate* unmanaged<void*, nuint, int, int, int, nint, void*>)mmap;
            s_munmap = (delegate* unmanaged<void*, nuint, int>)munmap;
        }
    }

    public static bool IsSupported => s_mmap != null;

    /// <summary>Maps <paramref name="length"/> bytes of zeroed, page-aligned memory.</summary>
    public static void* Map(nuint length)
    {
        void* p = s_mmap(null, length, ProtRead | ProtWrite, MapPrivate | MapAnonymous, -1, 0);
        if (p == (void*)-1)
        {
            throw new OutOfMemoryException($"mmap of {length} bytes failed (errno {Marshal.GetLastSystemError()}).");
        }
        return p;
    }

    /// <summary>Unmaps what <see cref="Map"/> returned, with the same length.</summary>
    public static void Unmap(void* p, nuint length)
    {
        if (s_munmap(p, length) != 0)
        {
            throw new InvalidOperationException($"munmap of {length} bytes at 0x{(nint)p:x} failed (errno {Marshal.GetLastSystemError()}).");
        }
    }
}
