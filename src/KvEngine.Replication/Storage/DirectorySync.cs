using System.Runtime.InteropServices;

namespace KvEngine.Replication.Storage;

/// <summary>
/// fsync of a directory, so a rename inside it survives a power loss (.NET has no API for it). Calls
/// the C library every .NET process on Linux has loaded: no native dependency. On Windows it does
/// nothing (NTFS journals metadata; a directory cannot be opened for flushing). KvEngine's own file
/// system does the same for its files; the replication package keeps its copy rather than reaching
/// into the engine's internals. Stateless and thread-safe.
/// </summary>
internal static partial class DirectorySync
{
    private const int ORdOnly = 0;
    private const int ODirectory = 0x10000; // Linux x86-64/arm64 O_DIRECTORY

    /// <summary>Makes the entries of <paramref name="directory"/> (renames, creations) durable.</summary>
    /// <exception cref="IOException">The directory cannot be opened or synced (the errno is in the message).</exception>
    public static void Sync(string directory)
    {
        if (OperatingSystem.IsWindows())
        {
            return;
        }
        int fd = Open(directory, ORdOnly | ODirectory);
        if (fd < 0)
        {
            throw new IOException($"Cannot open directory '{directory}' to sync it (errno {Marshal.GetLastPInvokeError()}).");
        }
        try
        {
            if (Fsync(fd) != 0)
            {
                throw new IOException($"fsync of directory '{directory}' failed (errno {Marshal.GetLastPInvokeError()}).");
            }
        }
        finally
        {
            _ = Close(fd);
        }
    }

    [LibraryImport("libc", EntryPoint = "open", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int Open(string path, int flags);

    [LibraryImport("libc", EntryPoint = "fsync", SetLastError = true)]
    private static partial int Fsync(int fd);

    [LibraryImport("libc", EntryPoint = "close", SetLastError = true)]
    private static partial int Close(int fd);
}
