using System.Runtime.InteropServices;

namespace KvEngine.Memory;

/// <summary>
/// Anonymous page mappings straight from the kernel (mmap/munmap in glibc's libc.so.6), for the
/// allocator's largest blocks: memtable arena blocks, whole filters. Through malloc those go back
/// to glibc's heaps when freed but stay resident there (malloc raises its mapping threshold after
/// the first large free, then serves such sizes from per-thread heaps it rarely trims); measured
/// with kvbench -threads=2, that kept ~90 MB of freed memtables in the resident set. A mapping
/// is returned to the kernel at once. Where libc.so.6 is not there (not Linux with glibc),
/// <see cref="IsSupported"/> is false and the caller keeps using NativeMemory.
/// <para>
/// <see cref="MapHugePages"/> aligns a mapping to the kernel's transparent huge page size and
/// advises it (<c>madvise(MADV_HUGEPAGE)</c>), so a structure searched at random (a memtable's skip
/// list) costs one TLB entry per 2 MiB instead of per 4 KiB: on a 40 MB memtable a search's
/// dependent misses otherwise each add a page walk. The kernel still backs the mapping
/// with small pages when it has no huge page to give (or THP is off: <see cref="HugePageSize"/> is
/// then 0 and nothing is advised). A huge page is resident as a whole once touched, so only
/// memory filled from the bottom up should ask for it.
/// </para>
/// Thread-safe.
/// </summary>
internal static unsafe class PageMemory
{
    private const int ProtRead = 0x1;
    private const int ProtWrite = 0x2;
    private const int MapPrivate = 0x02;
    private const int MapAnonymous = 0x20; // Linux's value
    private const int MadvHugePage = 14; // Linux's MADV_HUGEPAGE
    private const string TransparentHugePageDirectory = "/sys/kernel/mm/transparent_hugepage/";

    private static readonly delegate* unmanaged<void*, nuint, int, int, int, nint, void*> s_mmap;
    private static readonly delegate* unmanaged<void*, nuint, int> s_munmap;
    private static readonly delegate* unmanaged<void*, nuint, int, int> s_madvise;

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
            if (NativeLibrary.TryGetExport(libc, "madvise", out nint madvise))
            {
                s_madvise = (delegate* unmanaged<void*, nuint, int, int>)madvise;
                HugePageSize = ReadHugePageSize();
            }
        }
    }

    public static bool IsSupported => s_mmap != null;

    /// <summary>
    /// The transparent huge page size when the kernel offers them to advised mappings (THP
    /// "always" or "madvise"), otherwise 0.
    /// </summary>
    public static int HugePageSize { get; }

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

    /// <summary>
    /// Maps <paramref name="length"/> bytes of zeroed memory aligned to <see cref="HugePageSize"/>
    /// and advised as huge pages; a plain <see cref="Map"/> when there are none or the length is
    /// below one. <see cref="Unmap"/> takes it back with the same length, a whole number of pages
    /// (so the trimmed tail starts on a page boundary).
    /// </summary>
    public static void* MapHugePages(nuint length)
    {
        if (length == 0 || length % (nuint)Environment.SystemPageSize != 0)
        {
            throw new ArgumentOutOfRangeException(nameof(length), length, "A positive whole number of pages.");
        }
        nuint huge = (nuint)HugePageSize;
        if (huge == 0 || length < huge)
        {
            return Map(length);
        }
        // Over-map by one huge page, then return the unaligned head and the tail to the kernel.
        nuint span = length + huge;
        byte* raw = (byte*)Map(span);
        byte* aligned = (byte*)(((nuint)raw + huge - 1) & ~(huge - 1));
        nuint head = (nuint)(aligned - raw);
        nuint tail = span - head - length;
        if (head > 0)
        {
            Unmap(raw, head);
        }
        if (tail > 0)
        {
            Unmap(aligned + length, tail);
        }
        // Advice only: where the kernel refuses it the mapping is still good memory.
        _ = s_madvise(aligned, length, MadvHugePage);
        return aligned;
    }

    /// <summary>Unmaps what <see cref="Map"/> returned, with the same length.</summary>
    public static void Unmap(void* p, nuint length)
    {
        if (s_munmap(p, length) != 0)
        {
            throw new InvalidOperationException($"munmap of {length} bytes at 0x{(nint)p:x} failed (errno {Marshal.GetLastSystemError()}).");
        }
    }

    private static int ReadHugePageSize()
    {
        try
        {
            string enabled = File.ReadAllText(TransparentHugePageDirectory + "enabled");
            if (!enabled.Contains("[always]", StringComparison.Ordinal) && !enabled.Contains("[madvise]", StringComparison.Ordinal))
            {
                return 0;
            }
            string sizePath = TransparentHugePageDirectory + "hpage_pmd_size";
            int size = File.Exists(sizePath) && int.TryParse(File.ReadAllText(sizePath).Trim(), out int s) ? s : 2 << 20;
            return size >= Environment.SystemPageSize && int.IsPow2(size) && size <= 1 << 30 ? size : 0;
        }
#pragma warning disable CA1031 // no readable THP settings (container, other kernel): no huge pages
        catch (Exception)
#pragma warning restore CA1031
        {
            return 0;
        }
    }
}
