namespace KvEngine.Storage;

/// <summary>
/// Classifies I/O failures. "No space" (ENOSPC, EDQUOT; Windows' disk-full codes) is the
/// retryable kind: nothing is wrong with the data, and the same work succeeds once space is back
/// (RocksDB's NoSpace, which its error handler recovers from by itself). .NET reports the errno
/// of a failed Unix call as the IOException's HResult. Stateless and thread-safe.
/// </summary>
internal static class StorageErrors
{
    public const int ENoSpc = 28;
    public const int EDQuot = 122;
    private const int WindowsDiskFull = unchecked((int)0x80070070);
    private const int WindowsHandleDiskFull = unchecked((int)0x80070027);

    /// <summary>True when <paramref name="e"/>, or an exception it wraps, is an out-of-space I/O error.</summary>
    public static bool IsNoSpace(Exception? e)
    {
        for (; e != null; e = e.InnerException)
        {
            if (e is IOException && e.HResult is ENoSpc or EDQuot or WindowsDiskFull or WindowsHandleDiskFull)
            {
                return true;
            }
        }
        return false;
    }
}
