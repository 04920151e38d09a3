namespace KvEngine;

/// <summary>
/// A resource the operation needs is in use by a conflicting operation; retrying later may
/// succeed (RocksDB's <c>Status::Busy</c>). <see cref="KvException.StatusCode"/> is
/// <see cref="KvStatusCode.Busy"/>. Open for derivation by more specific conflicts (a write
/// conflict or deadlock of a transaction). Immutable.
/// </summary>
public class KvBusyException : KvException
{
    /// <summary>Creates an exception with <paramref name="message"/>.</summary>
    /// <param name="message">What went wrong.</param>
    public KvBusyException(string message) : this(message, KvStatusSubCode.None, null) { }

    /// <summary>Creates an exception with <paramref name="message"/>, <paramref name="subCode"/> and an optional cause.</summary>
    /// <param name="message">What went wrong.</param>
    /// <param name="subCode">The detail (for example <see cref="KvStatusSubCode.Deadlock"/>), or <see cref="KvStatusSubCode.None"/>.</param>
    /// <param name="innerException">The error that caused it, or null.</param>
    public KvBusyException(string message, KvStatusSubCode subCode, Exception? innerException)
        : base(message, KvStatusCode.Busy, subCode, innerException) { }
}
