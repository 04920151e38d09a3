using System.Buffers.Binary;

namespace KvEngine.Extensions.Caching;

/// <summary>The decoded header of a stored cache entry (see <see cref="CacheEntryFormat"/>). Immutable.</summary>
internal readonly record struct CacheEntryHeader(byte Flags, long ExpiresAt, long AbsoluteExpiration, long SlidingTicks)
{
    public bool HasSliding => (Flags & CacheEntryFormat.FlagSliding) != 0;

    public bool IsExpired(long nowTicks) => nowTicks >= ExpiresAt;

    /// <summary>The header after an access at <paramref name="nowTicks"/>: sliding moves the expiry, never past the absolute one.</summary>
    public CacheEntryHeader Touched(long nowTicks) => HasSliding
        ? this with { ExpiresAt = Math.Min(AbsoluteExpiration, CacheEntryFormat.AddSaturating(nowTicks, SlidingTicks)) }
        : this;

    public static CacheEntryHeader Read(ReadOnlySpan<byte> stored)
    {
        if (stored.Length < CacheEntryFormat.HeaderSize)
        {
            throw new KvCorruptionException($"Cache entry of {stored.Length} bytes is shorter than its {CacheEntryFormat.HeaderSize}-byte header.");
        }
        if (stored[0] != CacheEntryFormat.Version)
        {
            throw new KvCorruptionException($"Cache entry format version {stored[0]} is not {CacheEntryFormat.Version}.");
        }
        byte flags = stored[1];
        if ((flags & ~(CacheEntryFormat.FlagAbsolute | CacheEntryFormat.FlagSliding)) != 0)
        {
            throw new KvCorruptionException($"Cache entry has unknown flags 0x{flags:x2}.");
        }
        long expiresAt = BinaryPrimitives.ReadInt64LittleEndian(stored.Slice(2));
        long absolute = BinaryPrimitives.ReadInt64LittleEndian(stored.Slice(10));
        long sliding = BinaryPrimitives.ReadInt64LittleEndian(stored.Slice(18));
        bool hasAbsolute = (flags & CacheEntryFormat.FlagAbsolute) != 0;
        bool hasSliding = (flags & CacheEntryFormat.FlagSliding) != 0;
        if (expiresAt < 0 || absolute < 0 || sliding < 0 || hasAbsolute != (absolute != CacheEntryFormat.Never)
            || hasSliding != (sliding != 0) || expiresAt > absolute || (!hasSliding && expiresAt != absolute))
        {
            throw new KvCorruptionException("Cache entry header is inconsistent.");
        }
        return new CacheEntryHeader(flags, expiresAt, absolute, sliding);
    }

    public void Write(Span<byte> destination)
    {
        destination[0] = CacheEntryFormat.Version;
        destination[1] = Flags;
        BinaryPrimitives.WriteInt64LittleEndian(destination.Slice(2), ExpiresAt);
        BinaryPrimitives.WriteInt64LittleEndian(destination.Slice(10), AbsoluteExpiration);
        BinaryPrimitives.WriteInt64LittleEndian(destination.Slice(18), SlidingTicks);
    }
}
