using KvEngine.Storage.IO;

namespace KvEngine.Tests.Storage.IO;

/// <summary>Whether this machine lets the process set up an io_uring, probed once; the skip reason names the errno.</summary>
internal static class IoUringAvailability
{
    private static readonly Lazy<string?> s_unavailable = new(Probe);

    /// <summary>Null when io_uring works here; else why not (for a test's skip reason).</summary>
    public static string? Unavailable => s_unavailable.Value;

    private static string? Probe()
    {
        int errno = IoUring.TryCreate(4, out IoUring? ring);
        ring?.Dispose();
        return errno == 0 ? null : "io_uring is refused on this machine: io_uring_setup failed with " + BlockReadErrors.Describe(errno);
    }
}
