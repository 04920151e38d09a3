using System.Runtime.InteropServices;

namespace KvEngine.Tests.Storage;

/// <summary>
/// A writable directory on a mounted file system that refuses O_DIRECT at open (EINVAL), found by
/// trying the memory file systems /proc/mounts lists: /dev/shm (tmpfs, which refuses it before
/// Linux 6.6) first, then any tmpfs or ramfs mount. Null when there is none (then the tests that
/// need one are skipped, saying so). Computed once; thread-safe.
/// </summary>
internal static class DirectIORefusingMount
{
    private static readonly Lazy<string?> s_directory = new(Find);

    public static string? Directory => s_directory.Value;

    private static string? Find()
    {
        if (!OperatingSystem.IsLinux() || !File.Exists("/proc/mounts"))
        {
            return null;
        }
        var candidates = new List<string> { "/dev/shm" };
        foreach (string line in File.ReadAllLines("/proc/mounts"))
        {
            string[] f = line.Split(' ');
            if (f.Length > 3 && f[2] is "tmpfs" or "ramfs" && f[3].StartsWith("rw", StringComparison.Ordinal))
            {
                candidates.Add(f[1].Replace("\\040", " ", StringComparison.Ordinal));
            }
        }
        foreach (string dir in candidates)
        {
            if (Refuses(dir))
            {
                return dir;
            }
        }
        return null;
    }

    private static bool Refuses(string dir)
    {
        string probe = Path.Combine(dir, $"kvengine-odirect-probe-{Environment.ProcessId}-{Guid.NewGuid():N}");
        try
        {
            File.WriteAllBytes(probe, [1]);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return false;
        }
        try
        {
            int fd = Open(probe, 0x80000 | (RuntimeInformation.ProcessArchitecture is System.Runtime.InteropServices.Architecture.Arm64 ? 0x10000 : 0x4000));
            if (fd >= 0)
            {
                _ = Close(fd);
                return false;
            }
            return Marshal.GetLastPInvokeError() == 22; // EINVAL
        }
        finally
        {
            File.Delete(probe);
        }
    }

    [DllImport("libc", EntryPoint = "open", SetLastError = true)]
    private static extern int Open([MarshalAs(UnmanagedType.LPUTF8Str)] string path, int flags);

    [DllImport("libc", EntryPoint = "close")]
    private static extern int Close(int fd);
}
