using System.Buffers.Binary;

namespace KvEngine.Extensions.Caching;

/// <summary>
/// The renewal record of a sliding cache entry (docs/formats/cache_entry.md): stored under
/// <c>0xFE ++ entry key</c>, it holds the entry's current expiry, so that a read moving a sliding
/// expiration writes these 34 bytes instead of the whole value. It is tied to one generation of the
/// entry by a stamp, the entry header's three numbers as the Set wrote them: a renewal whose stamp
/// differs from the entry's header belongs to an earlier Set of the key and is ignored. Immutable.
/// </summary>
internal readonly record struct CacheRenewal(long StampExpiresAt, long StampAbsolute, long StampSliding, long ExpiresAt)
{
    /// <summary>Byte 0 of a renewal record.</summary>
    public const byte Version = 2;

    /// <summary>Byte 0 of a renewal record's key: never the first byte of UTF-8 text, so never an entry's key.</summary>
    public const byte KeyTag = 0xFE;

    /// <summary>Bytes of a renewal record: version, 7 zero bytes reserved, four int64 little-endian.</summary>
    public const int Size = 40;

    /// <summary>The renewal of the entry whose header is <paramref name="entry"/>, expiring at <paramref name="expiresAt"/>.</summary>
    public static CacheRenewal For(in CacheEntryHeader entry, long expiresAt) =>
        new(entry.ExpiresAt, entry.AbsoluteExpiration, entry.SlidingTicks, expiresAt);

    /// <summary>True when this renewal was written for the generation of the entry whose header is <paramref name="entry"/>.</summary>
    public bool Renews(in CacheEntryHeader entry) =>
        StampExpiresAt == entry.ExpiresAt && StampAbsolute == entry.AbsoluteExpiration && StampSliding == entry.SlidingTicks;

    /// <summary>Decodes a renewal record; false when <paramref name="stored"/> is not one (wrong size or version).</summary>
    public static bool TryRead(ReadOnlySpan<byte> stored, out CacheRenewal renewal)
    {
        if (stored.Length != Size || stored[0] != Version)
        {
            renewal = default;
            return false;
        }
        renewal = new CacheRenewal(
            BinaryPrimitives.ReadInt64LittleEndian(stored.Slice(8)),
            BinaryPrimitives.ReadInt64LittleEndian(stored.Slice(16)),
            BinaryPrimitives.ReadInt64LittleEndian(stored.Slice(24)),
            BinaryPrimitives.ReadInt64LittleEndian(stored.Slice(32)));
        return true;
    }

    /// <summary>The expires-at of a renewal record, read without decoding the rest; false when it is not one.</summary>
    public static bool TryReadExpiresAt(ReadOnlySpan<byte> stored, out long expiresAt)
    {
        if (stored.Length != Size || stored[0] != Version)
        {
            expiresAt = 0;
            return false;
        }
        expiresAt = BinaryPrimitives.ReadInt64LittleEndian(stored.Slice(32));
        return true;
    }

    /// <summary>Writes the record's <see cref="Size"/> bytes.</summary>
    public void Write(Span<byte> destination)
    {
        destination.Slice(0, 8).Clear();
        destination[0] = Version;
        BinaryPrimitives.WriteInt64LittleEndian(destination.Slice(8), StampExpiresAt);
        BinaryPrimitives.WriteInt64LittleEndian(destination.Slice(16), StampAbsolute);
        BinaryPrimitives.WriteInt64LittleEndian(destination.Slice(24), StampSliding);
        BinaryPrimitives.WriteInt64LittleEndian(destination.Slice(32), ExpiresAt);
    }
}
