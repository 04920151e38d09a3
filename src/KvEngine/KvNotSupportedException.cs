namespace KvEngine;

/// <summary>
/// The operation or a setting is not supported: a RocksDB feature KvEngine does not implement
/// (blob files, wide columns, WAL compression, another comparator or table format), or an
/// operation the way the database was opened forbids (<see cref="KvReadOnlyException"/>).
/// <see cref="KvException.StatusCode"/> is <see cref="KvStatusCode.NotSupported"/> (RocksDB's
/// <c>Status::NotSupported</c>). Immutable.
/// </summary>
public class KvNotSupportedException : KvException
{
    /// <summary>Creates an exception with <paramref name="message"/>.</summary>
    /// <param name="message">What went wrong.</param>
    public KvNotSupportedException(string message) : this(message, null) { }

    /// <summary>Creates an exception with <paramref name="message"/> caused by <paramref name="innerException"/>.</summary>
    /// <param name="message">What went wrong.</param>
    /// <param name="innerException">The error that caused it, or null.</param>
    public KvNotSupportedException(string message, Exception? innerException)
        : base(message, KvStatusCode.NotSupported, KvStatusSubCode.None, innerException) { }
}
