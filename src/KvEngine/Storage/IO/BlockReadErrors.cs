namespace KvEngine.Storage.IO;

/// <summary>Turns an errno from a read into the exception callers see. Stateless and thread-safe.</summary>
internal static class BlockReadErrors
{
    /// <summary>An <see cref="IOException"/> whose HResult is <paramref name="errno"/> (as .NET's own Unix I/O errors carry it).</summary>
    public static IOException Read(int errno, long offset, int length) =>
        new($"Reading {length} bytes at offset {offset} failed: {Describe(errno)}", errno);

    /// <summary>"EPERM (errno 1: Operation not permitted)".</summary>
    public static string Describe(int errno) =>
        $"{Name(errno)} (errno {errno}: {System.Runtime.InteropServices.Marshal.GetPInvokeErrorMessage(errno)})";

    /// <summary>The symbolic Linux name of the errno values I/O can meet, else "errno".</summary>
    public static string Name(int errno) => errno switch
    {
        1 => "EPERM",
        4 => "EINTR",
        5 => "EIO",
        9 => "EBADF",
        11 => "EAGAIN",
        12 => "ENOMEM",
        14 => "EFAULT",
        16 => "EBUSY",
        22 => "EINVAL",
        24 => "EMFILE",
        28 => "ENOSPC",
        38 => "ENOSYS",
        95 => "EOPNOTSUPP",
        125 => "ECANCELED",
        _ => "errno",
    };
}
