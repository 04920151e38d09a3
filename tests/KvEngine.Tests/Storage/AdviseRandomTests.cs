using System.Runtime.InteropServices;
using KvEngine.Storage;
using Xunit;

namespace KvEngine.Tests.Storage;

/// <summary>
/// KvOptions.AdviseRandomOnOpen (RocksDB's advise_random_on_open): a table file opened for random
/// reads gets POSIX_FADV_RANDOM, so a read right after its neighbour page brings in that page only
/// instead of a readahead window. Observed with mincore over a file evicted from the page cache.
/// </summary>
public sealed partial class AdviseRandomTests : IDisposable
{
    private const int Page = 4096;
    private const int FileBytes = 8 << 20;
    private readonly string _path = Path.Combine(Path.GetTempPath(), "kv-advise-" + Guid.NewGuid().ToString("N"));

    public void Dispose() => File.Delete(_path);

    [PageCacheFact]
    public void ARandomAdvisedFileReadsOnlyThePagesAsked()
    {
        Assert.True(ResidentAfterAdjacentReads(adviseRandom: false) > 1, "the kernel read nothing ahead without the advice");
        Assert.Equal(1, ResidentAfterAdjacentReads(adviseRandom: true));
    }

    [Fact]
    public void TheOptionIsOnByDefaultAndReachesTheOptionsFile()
    {
        Assert.True(new KvOptions().AdviseRandomOnOpen);
        string dir = _path + "-db";
        try
        {
            using (KvDb.Open(dir, new KvOptions { AdviseRandomOnOpen = false }))
            {
            }
            string options = File.ReadAllText(Directory.GetFiles(dir, "OPTIONS-*").Max()!);
            Assert.Contains("advise_random_on_open=false", options, StringComparison.Ordinal);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    // Pages resident in [4 MiB, 4 MiB + 256 KiB) after reading the page before 4 MiB and then the
    // page at 4 MiB (an adjacent read: the kernel's readahead would call it sequential).
    private int ResidentAfterAdjacentReads(bool adviseRandom)
    {
        WriteEvicted(_path);
        using var file = new LocalRandomAccessFile(_path, adviseRandom: adviseRandom);
        var buffer = new byte[Page];
        file.Read((4 << 20) - Page, buffer);
        file.Read(4 << 20, buffer);
        return Resident(_path, 4 << 20, 64);
    }

    internal static void WriteEvicted(string path)
    {
        var bytes = new byte[FileBytes];
        new Random(1).NextBytes(bytes);
        using (var s = new FileStream(path, FileMode.Create, FileAccess.Write))
        {
            s.Write(bytes);
            s.Flush(flushToDisk: true);
        }
        using var h = File.OpenHandle(path);
        _ = PosixFadvise((int)h.DangerousGetHandle(), 0, 0, 4); // POSIX_FADV_DONTNEED: clean pages leave
    }

    internal static unsafe int Resident(string path, long offset, int pages)
    {
        using var h = File.OpenHandle(path);
        nint map = PosixNative.Mmap(0, (nuint)(pages * Page), PosixNative.ProtRead, PosixNative.MapShared, (int)h.DangerousGetHandle(), offset);
        Assert.NotEqual(PosixNative.MapFailed, map);
        try
        {
            byte* vec = stackalloc byte[pages];
            Assert.Equal(0, Mincore(map, (nuint)(pages * Page), vec));
            int resident = 0;
            for (int i = 0; i < pages; i++)
            {
                resident += vec[i] & 1;
            }
            return resident;
        }
        finally
        {
            PosixNative.Munmap(map, (nuint)(pages * Page));
        }
    }

    [LibraryImport("libc", EntryPoint = "posix_fadvise")]
    private static partial int PosixFadvise(int fd, long offset, long length, int advice);

    [LibraryImport("libc", EntryPoint = "mincore")]
    private static unsafe partial int Mincore(nint address, nuint length, byte* vector);

    /// <summary>Runs where a file's clean pages can be dropped from the page cache (Linux, a disk file system: not tmpfs).</summary>
    private sealed class PageCacheFactAttribute : FactAttribute
    {
        public PageCacheFactAttribute()
        {
            if (!OperatingSystem.IsLinux())
            {
                Skip = "POSIX_FADV_RANDOM and mincore: Linux only";
                return;
            }
            string probe = Path.Combine(Path.GetTempPath(), "kv-advise-probe-" + Guid.NewGuid().ToString("N"));
            try
            {
                WriteEvicted(probe);
                if (Resident(probe, 0, 16) != 0)
                {
                    Skip = "the temporary directory's file system keeps files in memory (tmpfs): nothing to read ahead";
                }
            }
            finally
            {
                File.Delete(probe);
            }
        }
    }
}
