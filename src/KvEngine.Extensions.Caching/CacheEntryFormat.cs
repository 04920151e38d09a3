using System.Buffers.Binary;

namespace KvEngine.Extensions.Caching;

/// <summary>
/// The byte layout of a value stored by <see cref="KvEngineCache"/>: a fixed 26-byte header
/// holding the entry's expiration as its Set wrote it, then the cached bytes
/// (docs/formats/cache_entry.md). Reads of a sliding entry move its expiry in a separate renewal
/// record, never in these bytes. For an entry without sliding expiration, whether it has expired is
/// decided from the value bytes alone (<see cref="IsExpired"/>); for a sliding one the value gives a
/// lower bound of its expiry.
/// Stateless and thread-safe.
/// </summary>
public static class CacheEntryFormat
{
    /// <summary>The header's format version, byte 0 of every value.</summary>
    public const byte Version = 1;

    /// <summary>Bytes of the header before the cached value.</summary>
    public const int HeaderSize = 26;

    /// <summary>Header flag: the entry has an absolute expiration.</summary>
    internal const byte FlagAbsolute = 0x1;

    /// <summary>Header flag: the entry has a sliding expiration.</summary>
    internal const byte FlagSliding = 0x2;

    /// <summary>"Never" in the header's tick fields.</summary>
    internal const long Never = long.MaxValue;

    /// <summary>
    /// When the entry stored as <paramref name="storedValue"/> expires, as UTC ticks
    /// (<see cref="DateTimeOffset.UtcTicks"/>); <see cref="long.MaxValue"/> when it never does. For a
    /// sliding entry this is the expiry as of its Set (a read since may have moved it later, in the
    /// entry's renewal record).
    /// </summary>
    /// <exception cref="KvCorruptionException">The bytes are not a version 1 entry.</exception>
    public static long GetExpiresAtUtcTicks(ReadOnlySpan<byte> storedValue) => CacheEntryHeader.Read(storedValue).ExpiresAt;

    /// <summary>
    /// True when <paramref name="now"/> is at or past the expiry in <paramref name="storedValue"/>'s
    /// header: the entry has expired unless it has sliding expiration, whose renewal record may hold
    /// a later expiry (false is final either way).
    /// </summary>
    /// <exception cref="KvCorruptionException">The bytes are not a version 1 entry.</exception>
    public static bool IsExpired(ReadOnlySpan<byte> storedValue, DateTimeOffset now) =>
        CacheEntryHeader.Read(storedValue).IsExpired(now.UtcTicks);

    internal static long AddSaturating(long ticks, long delta) =>
        delta >= Never - ticks ? Never : ticks + delta;
}
