namespace KvEngine;

/// <summary>
/// The database's LOCK file is held by another <see cref="KvDb"/> in this process or by another
/// process (a KvEngine or RocksDB instance): the database is open elsewhere. Opening, repairing or
/// destroying it fails with this until that instance closes. Not raised when the LOCK file cannot
/// be created at all (permissions, a missing directory, no space): that is an I/O
/// <see cref="KvException"/>. <see cref="KvException.StatusCode"/> is
/// <see cref="KvStatusCode.IOError"/>, as RocksDB reports a held lock. Immutable.
/// </summary>
public sealed class KvLockHeldException : KvException
{
    /// <summary>Creates an exception with <paramref name="message"/>.</summary>
    /// <param name="message">What went wrong.</param>
    public KvLockHeldException(string message) : this(message, null) { }

    /// <summary>Creates an exception with <paramref name="message"/> caused by <paramref name="innerException"/>.</summary>
    /// <param name="message">What went wrong.</param>
    /// <param name="innerException">The error that caused it, or null.</param>
    public KvLockHeldException(string message, Exception? innerException)
        : base(message, KvStatusCode.IOError, KvStatusSubCode.None, innerException) { }
}
