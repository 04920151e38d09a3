namespace KvEngine;

/// <summary>
/// Data read from disk is not what was written: a checksum mismatch, a truncated or malformed
/// block, log record, table or MANIFEST. Never thrown for a caller's bad argument.
/// <see cref="KvException.StatusCode"/> is <see cref="KvStatusCode.Corruption"/>. Immutable.
/// </summary>
public class KvCorruptionException : KvException
{
    /// <summary>Creates an exception with the default message.</summary>
    public KvCorruptionException() : this("Corruption.") { }

    /// <summary>Creates an exception with <paramref name="message"/>.</summary>
    /// <param name="message">What went wrong.</param>
    public KvCorruptionException(string message) : base(message, KvStatusCode.Corruption, KvStatusSubCode.None, null) { }

    /// <summary>Creates an exception with <paramref name="message"/> caused by <paramref name="innerException"/>.</summary>
    /// <param name="message">What went wrong.</param>
    /// <param name="innerException">The error that caused it.</param>
    public KvCorruptionException(string message, Exception innerException) : base(message, KvStatusCode.Corruption, KvStatusSubCode.None, innerException) { }
}
