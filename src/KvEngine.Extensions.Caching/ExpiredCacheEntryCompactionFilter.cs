using System.Buffers;
using System.Buffers.Binary;

namespace KvEngine.Extensions.Caching;

/// <summary>
/// A <see cref="KvCompactionFilter"/> that removes expired cache entries (docs/formats/cache_entry.md),
/// so compaction reclaims the space of entries nobody reads again. <see cref="KvEngineCache"/>
/// installs one on its database with its own clock; set one yourself only when opening a cache's
/// database directly.
/// <para>
/// An entry (version byte 1) is removed when <c>now &gt;= expires-at</c> of its header and it has no
/// sliding expiration, or when the absolute expiration has passed. A sliding entry past the
/// expires-at its Set wrote is decided by its renewal record (key <c>0xFE ++ entry key</c>, where
/// reads move the expiry): removed when there is none for this generation of the entry or when
/// the renewal's expiry has passed, kept otherwise. A renewal record is removed when its own
/// expiry has passed (a renewal holds the entry's expiry, or an earlier generation's). So an entry
/// a reader could still get is never dropped, and an entry is never left without a renewal it
/// needs. Reading the renewal record needs the database: <see cref="KvEngineCache"/> attaches it
/// after opening; a filter without one keeps such entries (until a read deletes them).
/// </para>
/// <para>
/// A value that is neither (too short, another version) is kept: the filter never fails a
/// compaction. Thread-safe as the <see cref="TimeProvider"/> is; reads the clock once per value and
/// allocates nothing after a thread's first renewal lookup.
/// </para>
/// </summary>
public sealed class ExpiredCacheEntryCompactionFilter : KvCompactionFilter
{
    [ThreadStatic]
    private static PooledBufferWriter? t_renewal;

    [ThreadStatic]
    private static byte[]? t_renewalKey;

    private readonly TimeProvider _time;
    private volatile KvDb? _db;

    /// <summary>Creates the filter.</summary>
    /// <param name="timeProvider">The clock expirations are measured against (the cache's).</param>
    public ExpiredCacheEntryCompactionFilter(TimeProvider timeProvider)
    {
        ArgumentNullException.ThrowIfNull(timeProvider);
        _time = timeProvider;
    }

    /// <inheritdoc />
    public override string Name => "KvEngine.Extensions.Caching.ExpiredCacheEntryCompactionFilter";

    /// <summary>Lets the filter read renewal records of <paramref name="db"/>, the database it filters.</summary>
    internal void Attach(KvDb db) => _db = db;

    /// <inheritdoc />
    public override KvCompactionFilterDecision FilterValue(int level, ReadOnlySpan<byte> key, ReadOnlySpan<byte> existingValue,
        IBufferWriter<byte> newValue)
    {
        if (key.Length > 0 && key[0] == CacheRenewal.KeyTag)
        {
            return CacheRenewal.TryReadExpiresAt(existingValue, out long renewedUntil) && _time.GetUtcNow().UtcTicks >= renewedUntil
                ? KvCompactionFilterDecision.Remove
                : KvCompactionFilterDecision.Keep;
        }
        if (existingValue.Length < CacheEntryFormat.HeaderSize || existingValue[0] != CacheEntryFormat.Version)
        {
            return KvCompactionFilterDecision.Keep;
        }
        long now = _time.GetUtcNow().UtcTicks;
        long expiresAt = BinaryPrimitives.ReadInt64LittleEndian(existingValue.Slice(2));
        if (now < expiresAt)
        {
            return KvCompactionFilterDecision.Keep; // reads only ever move the expiry later
        }
        if ((existingValue[1] & CacheEntryFormat.FlagSliding) == 0)
        {
            return KvCompactionFilterDecision.Remove;
        }
        CacheEntryHeader header;
        try
        {
            header = CacheEntryHeader.Read(existingValue);
        }
        catch (KvCorruptionException)
        {
            return KvCompactionFilterDecision.Keep;
        }
        if (now >= header.AbsoluteExpiration)
        {
            return KvCompactionFilterDecision.Remove;
        }
        return RenewalSaysExpired(key, header, now) ?? false ? KvCompactionFilterDecision.Remove : KvCompactionFilterDecision.Keep;
    }

    /// <summary>
    /// Whether <paramref name="entry"/> (past the expires-at its Set wrote) has expired by its
    /// renewal record: true when it has no renewal of its generation or the renewal's expiry has
    /// passed; null when the database cannot be read (none attached, closed).
    /// </summary>
    private bool? RenewalSaysExpired(ReadOnlySpan<byte> key, in CacheEntryHeader entry, long now)
    {
        KvDb? db = _db;
        if (db == null)
        {
            return null;
        }
        byte[] renewalKey = t_renewalKey is { } k && k.Length > key.Length ? k : (t_renewalKey = new byte[Math.Max(64, key.Length * 2 + 1)]);
        renewalKey[0] = CacheRenewal.KeyTag;
        key.CopyTo(renewalKey.AsSpan(1));
        PooledBufferWriter buffer = t_renewal ??= new PooledBufferWriter(CacheRenewal.Size);
        buffer.Reset();
        try
        {
            if (!db.TryGet(renewalKey.AsSpan(0, key.Length + 1), buffer))
            {
                return true;
            }
        }
        catch (ObjectDisposedException)
        {
            return null; // the database is closing: keep the entry
        }
        return !CacheRenewal.TryRead(buffer.WrittenSpan, out CacheRenewal renewal) || !renewal.Renews(entry) || now >= renewal.ExpiresAt;
    }
}
