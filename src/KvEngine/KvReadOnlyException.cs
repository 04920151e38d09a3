namespace KvEngine;

/// <summary>
/// A write, flush, compaction, ingestion, checkpoint or other change was asked of a database
/// opened read-only (<see cref="KvDb.OpenReadOnly(string, KvOptions, bool)"/>), which writes nothing. As
/// in RocksDB, <see cref="KvException.StatusCode"/> is <see cref="KvStatusCode.NotSupported"/>.
/// Immutable.
/// </summary>
public sealed class KvReadOnlyException : KvNotSupportedException
{
    /// <summary>Creates an exception with <paramref name="message"/>.</summary>
    /// <param name="message">What went wrong.</param>
    public KvReadOnlyException(string message) : base(message, null) { }
}
