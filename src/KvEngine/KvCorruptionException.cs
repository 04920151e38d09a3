namespace KvEngine;

/// <summary>
/// Data read from disk is not what was written: a checksum mismatch, a truncated or malformed
/// block, log record, table or MANIFEST. Never thrown for a caller's bad argument.
/// </summary>
public class KvCorruptionException : KvException
{
    public KvCorruptionException() { }

    public KvCorruptionException(string message) : base(message) { }

    public KvCorruptionException(string message, Exception innerException) : base(message, innerException) { }
}
