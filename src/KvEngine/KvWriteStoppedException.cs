namespace KvEngine;

/// <summary>
/// The database refuses writes (and flushes, compactions and ingestion) because a background
/// error stopped it: a failed WAL or MANIFEST write, flush or compaction, a full disk.
/// <see cref="BackgroundError"/> (also the <see cref="Exception.InnerException"/>) is that error,
/// and <see cref="KvException.StatusCode"/> and <see cref="KvException.SubCode"/> are its codes
/// (as RocksDB returns the background error's status). Reads go on. <see cref="KvDb.Resume"/>
/// clears a stop that is not corruption; a full disk is resumed automatically once space is back
/// (<see cref="KvOptions.MaxBackgroundErrorResumeCount"/>). Immutable.
/// </summary>
public sealed class KvWriteStoppedException : KvException
{
    /// <summary>Creates an exception with <paramref name="message"/> for the stop <paramref name="backgroundError"/> caused.</summary>
    /// <param name="message">What went wrong.</param>
    /// <param name="backgroundError">The background error that stopped writes.</param>
    public KvWriteStoppedException(string message, Exception backgroundError)
        : base(message, CodesOf(backgroundError).Code, CodesOf(backgroundError).SubCode, backgroundError)
    {
        ArgumentNullException.ThrowIfNull(backgroundError);
        BackgroundError = backgroundError;
    }

    /// <summary>The error that stopped writes (the same as <see cref="Exception.InnerException"/>).</summary>
    public Exception BackgroundError { get; }
}
