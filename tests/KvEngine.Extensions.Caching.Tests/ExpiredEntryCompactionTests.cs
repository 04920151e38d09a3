using System.Buffers;
using System.Text;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;

namespace KvEngine.Extensions.Caching.Tests;

/// <summary>
/// Compaction drops expired cache entries: KvEngineCache installs
/// <see cref="ExpiredCacheEntryCompactionFilter"/> on its database with its own clock (a
/// FakeTimeProvider here, advanced by hand: nothing depends on real time).
/// </summary>
public sealed class ExpiredEntryCompactionTests : IDisposable
{
    private readonly TempDirectory _dir = new();
    private readonly FakeTimeProvider _time = new(new DateTimeOffset(2030, 1, 1, 0, 0, 0, TimeSpan.Zero));

    public void Dispose() => _dir.Dispose();

    private static byte[] Bytes(string s) => Encoding.UTF8.GetBytes(s);

    [Fact]
    public void Compaction_physically_removes_expired_entries_and_keeps_live_ones()
    {
        var statistics = new KvStatistics();
        using var cache = new KvEngineCache(Options.Create(new KvEngineCacheOptions
        {
            Path = _dir.Path,
            InstanceName = "app:",
            ConfigureDatabase = o => o.Statistics = statistics,
        }), _time);
        var shortLived = new DistributedCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromMinutes(1) };
        var longLived = new DistributedCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromHours(1) };
        var sliding = new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromMinutes(2) };
        for (int i = 0; i < 50; i++)
        {
            cache.Set("short" + i, Bytes("s" + i), shortLived);
            cache.Set("long" + i, Bytes("l" + i), longLived);
        }
        cache.Set("forever", Bytes("f"), new DistributedCacheEntryOptions());
        cache.Set("sliding", Bytes("w"), sliding);
        KvDb db = cache.Database;
        db.Flush();

        _time.Advance(TimeSpan.FromMinutes(1.5));
        Assert.Equal(Bytes("w"), cache.Get("sliding")); // a read moves its expiry to 03:30 (a renewal record)
        _time.Advance(TimeSpan.FromMinutes(1)); // 02:30: the short entries are expired, nobody read them;
                                                // the sliding one is past the 02:00 its Set wrote, not past its renewal
        Assert.NotNull(db.Get(Bytes("app:short7"))); // still on disk before compaction

        db.CompactRange(null, null);

        int shortLeft = 0;
        int longLeft = 0;
        using (KvIterator it = db.NewIterator())
        {
            for (it.SeekToFirst(); it.Valid; it.Next())
            {
                string key = Encoding.UTF8.GetString(it.Key);
                shortLeft += key.StartsWith("app:short", StringComparison.Ordinal) ? 1 : 0;
                longLeft += key.StartsWith("app:long", StringComparison.Ordinal) ? 1 : 0;
            }
        }
        Assert.Equal(0, shortLeft);
        Assert.Equal(50, longLeft);
        Assert.Null(db.Get(Bytes("app:short7")));
        Assert.Equal(50, statistics.GetTickerCount(Ticker.CompactionKeyDropUser));
        Assert.Equal(Bytes("l7"), cache.Get("long7"));
        Assert.Equal(Bytes("f"), cache.Get("forever"));
        Assert.NotNull(db.Get([0xFE, .. Bytes("app:sliding")])); // the renewal kept the entry, and itself
        Assert.Equal(Bytes("w"), cache.Get("sliding"));
        Assert.Null(cache.Get("short7"));

        // An hour later, with no new writes, the survivors sit in the bottom level: CompactRange
        // rewrites it in place and only the entry that never expires remains on disk (the sliding
        // entry went with its renewal record: no orphan of either).
        _time.Advance(TimeSpan.FromHours(1));
        db.CompactRange(null, null);
        var left = new List<string>();
        using (KvIterator it = db.NewIterator())
        {
            for (it.SeekToFirst(); it.Valid; it.Next())
            {
                left.Add(Encoding.UTF8.GetString(it.Key));
            }
        }
        Assert.Equal(new[] { "app:forever" }, left);
        Assert.Equal(50 + 50 + 2, statistics.GetTickerCount(Ticker.CompactionKeyDropUser));
        Assert.Equal(Bytes("f"), cache.Get("forever"));
    }

    [Fact]
    public void The_filter_decides_by_the_header_and_keeps_what_is_not_a_cache_entry()
    {
        var filter = new ExpiredCacheEntryCompactionFilter(_time);
        var writer = new ArrayBufferWriter<byte>();
        using (var cache = new KvEngineCache(Options.Create(new KvEngineCacheOptions { Path = _dir.Path }), _time))
        {
            cache.Set("k", Bytes("v"), new DistributedCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(10) });
            byte[] stored = cache.Database.Get(Bytes("k"))!;
            Assert.Equal(KvCompactionFilterDecision.Keep, filter.FilterValue(1, Bytes("k"), stored, writer));
            _time.Advance(TimeSpan.FromSeconds(10)); // expired from the instant expires-at is reached
            Assert.Equal(KvCompactionFilterDecision.Remove, filter.FilterValue(1, Bytes("k"), stored, writer));
        }
        Assert.Equal(KvCompactionFilterDecision.Keep, filter.FilterValue(1, Bytes("x"), Bytes("short"), writer));
        byte[] otherVersion = new byte[CacheEntryFormat.HeaderSize + 1];
        otherVersion[0] = 2; // expires-at 0 would be long past, but this is not a version 1 entry
        Assert.Equal(KvCompactionFilterDecision.Keep, filter.FilterValue(1, Bytes("x"), otherVersion, writer));
        Assert.Equal(0, writer.WrittenCount);
    }
}
