using System.Buffers;
using System.Buffers.Binary;

namespace KvEngine.Extensions.Caching;

/// <summary>
/// A <see cref="KvCompactionFilter"/> that removes cache entries whose header says they have
/// expired (docs/formats/cache_entry.md: version byte 1 and now &gt;= expires-at), so compaction
/// reclaims the space of entries nobody reads again. <see cref="KvEngineCache"/> installs one on its
/// database with its own clock; set one yourself only when opening a cache's database directly.
/// <para>
/// A value that is not a version 1 cache entry (too short, another version) is kept: the filter
/// never fails a compaction. A sliding entry's expires-at is moved forward by every read, so an
/// entry a reader could still get is never dropped; the filter reads the clock once per value.
/// Thread-safe as the <see cref="TimeProvider"/> is; allocates nothing.
/// </para>
/// </summary>
public sealed class ExpiredCacheEntryCompactionFilter : KvCompactionFilter
{
    private readonly TimeProvider _time;

    /// <summary>Creates the filter.</summary>
    /// <param name="timeProvider">The clock expirations are measured against (the cache's).</param>
    public ExpiredCacheEntryCompactionFilter(TimeProvider timeProvider)
    {
        ArgumentNullException.ThrowIfNull(timeProvider);
        _time = timeProvider;
    }

    /// <inheritdoc />
    public override string Name => "KvEngine.Extensions.Caching.ExpiredCacheEntryCompactionFilter";

    /// <inheritdoc />
    public override KvCompactionFilterDecision FilterValue(int level, ReadOnlySpan<byte> key, ReadOnlySpan<byte> existingValue,
        IBufferWriter<byte> newValue)
    {
        if (existingValue.Length < CacheEntryFormat.HeaderSize || existingValue[0] != CacheEntryFormat.Version)
        {
            return KvCompactionFilterDecision.Keep;
        }
        long expiresAt = BinaryPrimitives.ReadInt64LittleEndian(existingValue.Slice(2));
        return _time.GetUtcNow().UtcTicks >= expiresAt ? KvCompactionFilterDecision.Remove : KvCompactionFilterDecision.Keep;
    }
}
