namespace KvEngine;

/// <summary>
/// A wait the operation needed (for a lock, a mutex) ran out of its allowed time (RocksDB's
/// <c>Status::TimedOut</c>); nothing was changed. <see cref="KvException.StatusCode"/> is
/// <see cref="KvStatusCode.TimedOut"/>; <see cref="KvException.SubCode"/> says what was waited
/// for (<see cref="KvStatusSubCode.LockTimeout"/>, <see cref="KvStatusSubCode.MutexTimeout"/>).
/// Open for derivation. Immutable.
/// </summary>
public class KvTimeoutException : KvException
{
    /// <summary>Creates an exception with <paramref name="message"/>.</summary>
    /// <param name="message">What went wrong.</param>
    public KvTimeoutException(string message) : this(message, KvStatusSubCode.None, null) { }

    /// <summary>Creates an exception with <paramref name="message"/>, <paramref name="subCode"/> and an optional cause.</summary>
    /// <param name="message">What went wrong.</param>
    /// <param name="subCode">What was waited for, or <see cref="KvStatusSubCode.None"/>.</param>
    /// <param name="innerException">The error that caused it, or null.</param>
    public KvTimeoutException(string message, KvStatusSubCode subCode, Exception? innerException)
        : base(message, KvStatusCode.TimedOut, subCode, innerException) { }
}
