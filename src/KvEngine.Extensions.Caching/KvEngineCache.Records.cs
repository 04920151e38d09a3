using System.Buffers;
using System.Text;
using Microsoft.Extensions.Caching.Distributed;

namespace KvEngine.Extensions.Caching;

/// <summary>
/// The records of <see cref="KvEngineCache"/> (docs/formats/cache_entry.md): the keys of an entry
/// and of its renewal, the entry's header and value, the renewal's lookup, the deletion of both,
/// and the lock of a key. Thread-safety as the class's.
/// </summary>
public sealed partial class KvEngineCache
{
    /// <summary>The expiry of the sliding entry <paramref name="header"/>: its renewal record's when one of its generation exists.</summary>
    private static long CurrentExpiry(KvDb db, ReadOnlySpan<byte> renewalKey, in CacheEntryHeader header)
    {
        PooledBufferWriter buffer = t_renewal ??= new PooledBufferWriter(CacheRenewal.Size);
        buffer.Reset();
        return db.TryGet(renewalKey, buffer) && CacheRenewal.TryRead(buffer.WrittenSpan, out CacheRenewal renewal) && renewal.Renews(header)
            ? Math.Max(header.ExpiresAt, renewal.ExpiresAt)
            : header.ExpiresAt;
    }

    /// <summary>Deletes an entry and its renewal record in one batch (both or neither survive a crash).</summary>
    private void DeleteEntry(KvDb db, ReadOnlySpan<byte> renewalKey)
    {
        WriteBatch batch = t_batch ??= new WriteBatch();
        batch.Clear();
        batch.Delete(renewalKey[1..]);
        batch.Delete(renewalKey);
        db.Write(batch, _writeOptions);
        batch.Clear();
    }

    private static CacheEntryHeader NewHeader(DistributedCacheEntryOptions options, long now, out bool alreadyExpired)
    {
        long absolute = CacheEntryFormat.Never;
        if (options.AbsoluteExpiration is { } at)
        {
            absolute = at.UtcTicks;
        }
        if (options.AbsoluteExpirationRelativeToNow is { } relative)
        {
            absolute = Math.Min(absolute, CacheEntryFormat.AddSaturating(now, relative.Ticks));
        }
        long sliding = options.SlidingExpiration is { } s ? s.Ticks : 0; // positive: the options' setter checks
        byte flags = (byte)((absolute != CacheEntryFormat.Never ? CacheEntryFormat.FlagAbsolute : 0)
            | (sliding != 0 ? CacheEntryFormat.FlagSliding : 0));
        long expiresAt = sliding != 0 ? Math.Min(absolute, CacheEntryFormat.AddSaturating(now, sliding)) : absolute;
        alreadyExpired = now >= expiresAt;
        return new CacheEntryHeader(flags, expiresAt, absolute, sliding);
    }

    private static void Compose(PooledBufferWriter entry, CacheEntryHeader header, in ReadOnlySequence<byte> value)
    {
        if (value.Length > Array.MaxLength - CacheEntryFormat.HeaderSize)
        {
            throw new ArgumentOutOfRangeException(nameof(value), $"A cache value may hold at most {Array.MaxLength - CacheEntryFormat.HeaderSize} bytes.");
        }
        entry.Reset();
        header.Write(entry.GetSpan(CacheEntryFormat.HeaderSize));
        entry.Advance(CacheEntryFormat.HeaderSize);
        foreach (ReadOnlyMemory<byte> segment in value)
        {
            entry.Write(segment.Span);
        }
    }

    /// <summary>
    /// Encodes the renewal key <c>0xFE ++ InstanceName ++ key</c> (UTF-8); the entry's key is the
    /// result without its first byte.
    /// </summary>
    private Span<byte> EncodeKeys(string key, Span<byte> stack, ref byte[]? rented)
    {
        int max = 1 + _prefix.Length + Encoding.UTF8.GetMaxByteCount(key.Length);
        Span<byte> dest = max <= stack.Length ? stack : (rented = ArrayPool<byte>.Shared.Rent(max));
        dest[0] = CacheRenewal.KeyTag;
        _prefix.CopyTo(dest.Slice(1));
        int n = Encoding.UTF8.GetBytes(key, dest.Slice(1 + _prefix.Length));
        return dest.Slice(0, 1 + _prefix.Length + n);
    }

    /// <summary><see cref="EncodeKeys"/> into a rented array (for async methods); return it to the pool.</summary>
    private byte[] EncodeKeysArray(string key, out int length)
    {
        byte[] k = ArrayPool<byte>.Shared.Rent(1 + _prefix.Length + Encoding.UTF8.GetMaxByteCount(key.Length));
        k[0] = CacheRenewal.KeyTag;
        _prefix.CopyTo(k, 1);
        length = 1 + _prefix.Length + Encoding.UTF8.GetBytes(key, 0, key.Length, k, 1 + _prefix.Length);
        return k;
    }

    private static void Return(byte[]? rented)
    {
        if (rented != null)
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    /// <summary>The lock of a key (hashed from its renewal key, so the same for both records).</summary>
    private SemaphoreSlim Stripe(ReadOnlySpan<byte> renewalKey)
    {
        uint h = 2166136261;
        foreach (byte b in renewalKey)
        {
            h = (h ^ b) * 16777619;
        }
        SemaphoreSlim[] stripes = _shared.Stripes;
        return stripes[h % (uint)stripes.Length];
    }

}
