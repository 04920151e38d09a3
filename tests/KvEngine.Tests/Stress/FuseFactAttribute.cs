namespace KvEngine.Tests.Stress;

/// <summary>
/// A fact that needs FUSE: skipped, saying why, when this machine has no usable /dev/fuse or the
/// process may not mount (neither CAP_SYS_ADMIN nor the setuid fusermount3). Everything else the
/// test needs (a C compiler, libfuse3's headers; .ci/run installs them) is not a reason to skip:
/// without it the test fails with kvcrashtest's "FUSE unavailable" message.
/// </summary>
public sealed class FuseFactAttribute : FactAttribute
{
    public FuseFactAttribute()
    {
        string? why = Unavailable();
        if (why != null)
        {
            Skip = "FUSE is not usable on this machine: " + why;
        }
    }

    private static string? Unavailable()
    {
        if (!OperatingSystem.IsLinux())
        {
            return "not Linux";
        }
        try
        {
            using Microsoft.Win32.SafeHandles.SafeFileHandle h = File.OpenHandle("/dev/fuse", FileMode.Open, FileAccess.ReadWrite);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return "/dev/fuse cannot be opened (" + e.Message + ")";
        }
        const int CapSysAdmin = 21;
        string? caps = File.ReadLines("/proc/self/status").FirstOrDefault(l => l.StartsWith("CapEff:", StringComparison.Ordinal));
        bool admin = caps != null && ((Convert.ToUInt64(caps["CapEff:".Length..].Trim(), 16) >> CapSysAdmin) & 1) == 1;
        if (!admin && !File.Exists("/usr/bin/fusermount3") && !File.Exists("/bin/fusermount3"))
        {
            return "mounting needs CAP_SYS_ADMIN or fusermount3 (Debian: fuse3)";
        }
        return null;
    }
}
