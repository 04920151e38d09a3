namespace KvEngine.Storage;

/// <summary>
/// <see cref="IFileSystem.LockFile"/> found the lock taken by another process or instance, as
/// opposed to failing to create or open the lock file at all (permissions, a missing directory,
/// no space), which surfaces as the file system's own exception.
/// </summary>
internal sealed class LockHeldException : IOException
{
    public LockHeldException(string message, Exception? inner = null)
        : base(message, inner)
    {
    }
}
