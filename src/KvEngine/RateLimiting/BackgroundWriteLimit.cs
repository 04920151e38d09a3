namespace KvEngine.RateLimiting;

/// <summary>
/// What a database's flush and compaction jobs charge their table writes to: the
/// <see cref="KvOptions.RateLimiter"/> and the database's shutdown token, which ends a wait for
/// the limiter when the database closes (the limiter may be shared, so it is never stopped
/// itself). Immutable.
/// </summary>
internal sealed record BackgroundWriteLimit(KvRateLimiter Limiter, CancellationToken Cancellation);
