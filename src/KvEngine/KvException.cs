using KvEngine.Storage;

namespace KvEngine;

/// <summary>
/// Base type of every error KvEngine raises on its own account. <see cref="StatusCode"/> and
/// <see cref="SubCode"/> classify it as RocksDB's <c>Status</c> would; the derived types name the
/// failures a caller usually reacts to: <see cref="KvCorruptionException"/>,
/// <see cref="KvLockHeldException"/>, <see cref="KvWriteStoppedException"/>,
/// <see cref="KvBusyException"/>, <see cref="KvTimeoutException"/>,
/// <see cref="KvNotSupportedException"/> and <see cref="KvReadOnlyException"/>. A full disk is a
/// <see cref="KvException"/> with <see cref="KvStatusCode.IOError"/> and
/// <see cref="KvStatusSubCode.NoSpace"/> (or a <see cref="KvWriteStoppedException"/> carrying one
/// once writes have stopped on it). Immutable.
/// </summary>
public class KvException : Exception
{
    /// <summary>Creates an exception with the default message and <see cref="KvStatusCode.Aborted"/>.</summary>
    public KvException()
    {
        StatusCode = KvStatusCode.Aborted;
    }

    /// <summary>Creates an exception with <paramref name="message"/> and <see cref="KvStatusCode.Aborted"/>.</summary>
    /// <param name="message">What went wrong.</param>
    public KvException(string message) : base(message)
    {
        StatusCode = KvStatusCode.Aborted;
    }

    /// <summary>
    /// Creates an exception with <paramref name="message"/> caused by <paramref name="innerException"/>,
    /// with its codes: a <see cref="KvException"/>'s own, <see cref="KvStatusCode.IOError"/> for
    /// an I/O failure (<see cref="KvStatusSubCode.NoSpace"/> when the device is full), otherwise
    /// <see cref="KvStatusCode.Aborted"/>.
    /// </summary>
    /// <param name="message">What went wrong.</param>
    /// <param name="innerException">The error that caused it.</param>
    public KvException(string message, Exception innerException) : base(message, innerException)
    {
        (StatusCode, SubCode) = CodesOf(innerException);
    }

    /// <summary>Creates an exception with <paramref name="message"/> and the given codes.</summary>
    /// <param name="message">What went wrong.</param>
    /// <param name="statusCode">The kind of failure.</param>
    /// <param name="subCode">The detail, or <see cref="KvStatusSubCode.None"/>.</param>
    /// <param name="innerException">The error that caused it, or null.</param>
    public KvException(string message, KvStatusCode statusCode, KvStatusSubCode subCode, Exception? innerException)
        : base(message, innerException)
    {
        StatusCode = statusCode;
        SubCode = subCode;
    }

    /// <summary>The kind of failure (RocksDB's <c>Status::code()</c>).</summary>
    public KvStatusCode StatusCode { get; }

    /// <summary>The detail of <see cref="StatusCode"/> (RocksDB's <c>Status::subcode()</c>); <see cref="KvStatusSubCode.None"/> when there is none.</summary>
    public KvStatusSubCode SubCode { get; }

    /// <summary>
    /// The codes a failure caused by <paramref name="cause"/> carries: a <see cref="KvException"/>'s
    /// own, <see cref="KvStatusCode.IOError"/> for an I/O or access failure (with
    /// <see cref="KvStatusSubCode.NoSpace"/> for a full device, <see cref="KvStatusSubCode.PathNotFound"/>
    /// for a missing file or directory), otherwise <see cref="KvStatusCode.Aborted"/>.
    /// </summary>
    internal static (KvStatusCode Code, KvStatusSubCode SubCode) CodesOf(Exception? cause)
    {
        if (cause is KvException kv)
        {
            return (kv.StatusCode, kv.SubCode);
        }
        if (StorageErrors.IsNoSpace(cause))
        {
            return (KvStatusCode.IOError, KvStatusSubCode.NoSpace);
        }
        return cause switch
        {
            FileNotFoundException or DirectoryNotFoundException => (KvStatusCode.IOError, KvStatusSubCode.PathNotFound),
            IOException or UnauthorizedAccessException => (KvStatusCode.IOError, KvStatusSubCode.None),
            NotSupportedException => (KvStatusCode.NotSupported, KvStatusSubCode.None),
            ArgumentException => (KvStatusCode.InvalidArgument, KvStatusSubCode.None),
            _ => (KvStatusCode.Aborted, KvStatusSubCode.None),
        };
    }
}
