using System.Buffers.Binary;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;

namespace KvEngine.Extensions.Caching.Tests;

/// <summary>
/// Sliding expiration kept apart from the value: a read writes a 40-byte renewal record, never the
/// value; the renewal belongs to one Set of the key; entries stored without renewals (every entry
/// the format ever wrote) still read and renew.
/// </summary>
public sealed class KvEngineCacheSlidingTests : IDisposable
{
    private readonly TempDirectory _dir = new();
    private readonly FakeTimeProvider _time = new(new DateTimeOffset(2030, 1, 1, 0, 0, 0, TimeSpan.Zero));
    private readonly KvStatistics _statistics = new();

    public void Dispose() => _dir.Dispose();

    private KvEngineCache Open() =>
        new(Options.Create(new KvEngineCacheOptions { Path = _dir.Path, ConfigureDatabase = o => o.Statistics = _statistics }), _time);

    [Fact]
    public void A_sliding_read_of_a_large_value_writes_a_few_bytes_not_the_value()
    {
        using KvEngineCache cache = Open();
        byte[] value = new byte[1 << 20];
        new Random(3).NextBytes(value);
        cache.Set("big", value, new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromMinutes(5) });
        long before = _statistics.GetTickerCount(Ticker.BytesWritten);
        for (int i = 0; i < 10; i++)
        {
            _time.Advance(TimeSpan.FromSeconds(1));
            Assert.Equal(value, cache.Get("big"));
        }
        long perRead = (_statistics.GetTickerCount(Ticker.BytesWritten) - before) / 10;
        Assert.InRange(perRead, 1, 128); // each read renewed (a write), with a record of about 60 bytes
        _time.Advance(TimeSpan.FromMinutes(5) - TimeSpan.FromTicks(1));
        Assert.NotNull(cache.Get("big")); // the last read moved the expiry
    }

    [Fact]
    public void A_renewal_applies_only_to_the_Set_it_was_written_for()
    {
        using KvEngineCache cache = Open();
        var sliding = new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromMinutes(1) };
        cache.Set("k", [1], sliding);
        _time.Advance(TimeSpan.FromSeconds(50));
        Assert.NotNull(cache.Get("k")); // renewed until 01:50
        _time.Advance(TimeSpan.FromSeconds(5));
        // A new Set with an absolute expiry: the old renewal (01:50) must not extend it past 01:05.
        cache.Set("k", [2], new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromMinutes(1), AbsoluteExpiration = _time.GetUtcNow().AddSeconds(10) });
        _time.Advance(TimeSpan.FromSeconds(10));
        Assert.Null(cache.Get("k"));
        Assert.Null(cache.Database.Get([0xFE, .. "k"u8])); // the expired read deleted both records

        cache.Set("r", [3], sliding);
        _time.Advance(TimeSpan.FromSeconds(30));
        Assert.NotNull(cache.Get("r"));
        cache.Remove("r");
        Assert.Null(cache.Database.Get("r"u8));
        Assert.Null(cache.Database.Get([0xFE, .. "r"u8])); // removed with its entry, in one batch
    }

    [Fact]
    public void An_entry_stored_without_a_renewal_record_reads_and_renews()
    {
        // What every earlier version stored: the entry alone, its header's expires-at moved by reads.
        DateTimeOffset now = _time.GetUtcNow();
        byte[] stored = new byte[CacheEntryFormat.HeaderSize + 3];
        stored[0] = 1;
        stored[1] = 0x2; // sliding
        BinaryPrimitives.WriteInt64LittleEndian(stored.AsSpan(2), now.AddMinutes(3).UtcTicks);
        BinaryPrimitives.WriteInt64LittleEndian(stored.AsSpan(10), long.MaxValue);
        BinaryPrimitives.WriteInt64LittleEndian(stored.AsSpan(18), TimeSpan.FromMinutes(5).Ticks);
        "old"u8.CopyTo(stored.AsSpan(CacheEntryFormat.HeaderSize));
        using (KvDb db = KvDb.Open(_dir.Path))
        {
            db.Put("legacy"u8, stored);
        }
        using KvEngineCache cache = Open();
        _time.Advance(TimeSpan.FromMinutes(2));
        Assert.Equal("old"u8.ToArray(), cache.Get("legacy"));
        _time.Advance(TimeSpan.FromMinutes(4)); // past the stored 03:00, within the renewed 07:00
        Assert.Equal("old"u8.ToArray(), cache.Get("legacy"));
        Assert.Equal(stored, cache.Database.Get("legacy"u8));
        _time.Advance(TimeSpan.FromMinutes(5));
        Assert.Null(cache.Get("legacy"));
        Assert.Null(cache.Database.Get("legacy"u8));
    }
}
