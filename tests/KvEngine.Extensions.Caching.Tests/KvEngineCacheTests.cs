using System.Buffers;
using System.Buffers.Binary;
using System.Text;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;

namespace KvEngine.Extensions.Caching.Tests;

/// <summary>What KvEngineCache does beyond the IDistributedCache contract: the buffer interface,
/// the stored layout, deletion of expired entries, persistence, cancellation, options.</summary>
public sealed class KvEngineCacheTests : IDisposable
{
    private readonly TempDirectory _dir = new();
    private readonly FakeTimeProvider _time = new(new DateTimeOffset(2030, 1, 1, 0, 0, 0, TimeSpan.Zero));

    public void Dispose() => _dir.Dispose();

    private KvEngineCache Open(string? instanceName = null) =>
        new(Options.Create(new KvEngineCacheOptions { Path = _dir.Path, InstanceName = instanceName }), _time);

    private static byte[] Bytes(string s) => Encoding.UTF8.GetBytes(s);

    [Fact]
    public async Task The_buffer_interface_writes_into_the_callers_writer_and_takes_a_multi_segment_sequence()
    {
        using KvEngineCache cache = Open();
        ReadOnlySequence<byte> value = TestSegment.Sequence(Bytes("hello, "), Bytes("segmented "), Bytes("world"));
        cache.Set("k", value, new DistributedCacheEntryOptions());
        var writer = new ArrayBufferWriter<byte>();
        writer.Write(Bytes(">>")); // TryGet appends
        Assert.True(cache.TryGet("k", writer));
        Assert.Equal(Bytes(">>hello, segmented world"), writer.WrittenSpan.ToArray());

        await cache.SetAsync("k2", TestSegment.Sequence(Bytes("a"), [], Bytes("bc")), new DistributedCacheEntryOptions());
        var writer2 = new ArrayBufferWriter<byte>();
        Assert.True(await cache.TryGetAsync("k2", writer2));
        Assert.Equal(Bytes("abc"), writer2.WrittenSpan.ToArray());
        Assert.Equal(Bytes("abc"), cache.Get("k2"));

        var none = new ArrayBufferWriter<byte>();
        Assert.False(cache.TryGet("missing", none));
        Assert.False(await cache.TryGetAsync("missing", none));
        Assert.Equal(0, none.WrittenCount);

        cache.Set("exp", TestSegment.Sequence(Bytes("x")), new DistributedCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(1) });
        _time.Advance(TimeSpan.FromSeconds(1));
        Assert.False(cache.TryGet("exp", none));
        Assert.Equal(0, none.WrittenCount);
        Assert.Throws<ArgumentNullException>(() => cache.TryGet("k", null!));
        Assert.Throws<ArgumentNullException>(() => cache.TryGet(null!, none));
    }

    [Fact]
    public void TryGet_of_a_live_entry_allocates_nothing()
    {
        using KvEngineCache cache = Open("prefix:");
        byte[] value = new byte[3000];
        new Random(7).NextBytes(value);
        cache.Set("absolute", value, new DistributedCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromHours(1) });
        cache.Set("none", value, new DistributedCacheEntryOptions());
        cache.Set("sliding", value, new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromHours(1) });
        var destination = new ArrayBufferWriter<byte>(value.Length);
        for (int i = 0; i < 10; i++) // warm up: thread buffer, JIT
        {
            destination.ResetWrittenCount();
            Assert.True(cache.TryGet("absolute", destination));
            _time.Advance(TimeSpan.FromSeconds(1));
            destination.ResetWrittenCount();
            Assert.True(cache.TryGet("sliding", destination));
        }
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < 100; i++)
        {
            destination.ResetWrittenCount();
            cache.TryGet("absolute", destination);
            destination.ResetWrittenCount();
            cache.TryGet("none", destination);
            _time.Advance(TimeSpan.FromSeconds(1));
            destination.ResetWrittenCount();
            cache.TryGet("sliding", destination); // reads the renewal and writes a new one
        }
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Equal(value, destination.WrittenSpan.ToArray());
        Assert.Equal(0, allocated);
    }

    [Fact]
    public void The_stored_value_is_the_documented_header_then_the_bytes()
    {
        DateTimeOffset now = _time.GetUtcNow();
        using (KvEngineCache cache = Open("app:"))
        {
            cache.Set("abs", Bytes("v1"), new DistributedCacheEntryOptions { AbsoluteExpiration = now.AddHours(1) });
            cache.Set("both", Bytes("v2"), new DistributedCacheEntryOptions { AbsoluteExpiration = now.AddHours(1), SlidingExpiration = TimeSpan.FromMinutes(5) });
            cache.Set("none", Bytes("v3"), new DistributedCacheEntryOptions());
        }
        using KvDb db = KvDb.Open(_dir.Path);
        Assert.Null(db.Get("abs"u8)); // stored under the instance name's prefix
        byte[] abs = db.Get("app:abs"u8)!;
        Assert.Equal(CacheEntryFormat.HeaderSize + 2, abs.Length);
        Assert.Equal(1, abs[0]);
        Assert.Equal(0x1, abs[1]);
        Assert.Equal(now.AddHours(1).UtcTicks, BinaryPrimitives.ReadInt64LittleEndian(abs.AsSpan(2)));
        Assert.Equal(now.AddHours(1).UtcTicks, BinaryPrimitives.ReadInt64LittleEndian(abs.AsSpan(10)));
        Assert.Equal(0, BinaryPrimitives.ReadInt64LittleEndian(abs.AsSpan(18)));
        Assert.Equal(Bytes("v1"), abs[26..]);

        byte[] both = db.Get("app:both"u8)!;
        Assert.Equal(0x3, both[1]);
        Assert.Equal(now.AddMinutes(5).UtcTicks, BinaryPrimitives.ReadInt64LittleEndian(both.AsSpan(2)));
        Assert.Equal(now.AddHours(1).UtcTicks, BinaryPrimitives.ReadInt64LittleEndian(both.AsSpan(10)));
        Assert.Equal(TimeSpan.FromMinutes(5).Ticks, BinaryPrimitives.ReadInt64LittleEndian(both.AsSpan(18)));

        byte[] none = db.Get("app:none"u8)!;
        Assert.Equal(0x0, none[1]);
        Assert.Equal(long.MaxValue, BinaryPrimitives.ReadInt64LittleEndian(none.AsSpan(2)));
        Assert.Equal(long.MaxValue, CacheEntryFormat.GetExpiresAtUtcTicks(none));

        // What a compaction filter would decide, from the value bytes alone:
        Assert.False(CacheEntryFormat.IsExpired(both, now.AddMinutes(5).AddTicks(-1)));
        Assert.True(CacheEntryFormat.IsExpired(both, now.AddMinutes(5)));
        Assert.False(CacheEntryFormat.IsExpired(none, DateTimeOffset.MaxValue));
    }

    [Fact]
    public void The_example_in_docs_formats_cache_entry_md_is_byte_exact()
    {
        Assert.Equal(new DateTimeOffset(2030, 1, 1, 0, 0, 0, TimeSpan.Zero), _time.GetUtcNow());
        using (KvEngineCache cache = Open())
        {
            cache.Set("k", "v"u8.ToArray(), new DistributedCacheEntryOptions
            {
                AbsoluteExpiration = new DateTimeOffset(2030, 1, 1, 1, 0, 0, TimeSpan.Zero),
                SlidingExpiration = TimeSpan.FromMinutes(5),
            });
        }
        using KvDb db = KvDb.Open(_dir.Path);
        Assert.Equal(
            "01 03 00 1e 4d 75 d8 c4 e2 08 00 28 41 24 e0 c4 e2 08 00 5e d0 b2 00 00 00 00 76",
            string.Join(' ', db.Get("k"u8)!.Select(b => b.ToString("x2", System.Globalization.CultureInfo.InvariantCulture))));
    }

    [Fact]
    public void A_read_moves_the_sliding_expiry_in_the_renewal_record_and_leaves_the_entry_as_set()
    {
        DateTimeOffset now = _time.GetUtcNow();
        byte[] stored;
        using (KvEngineCache cache = Open("app:"))
        {
            cache.Set("s", Bytes("v"), new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromMinutes(1) });
            stored = cache.Database.Get("app:s"u8)!;
            _time.Advance(TimeSpan.FromSeconds(30));
            Assert.NotNull(cache.Get("s"));
        }
        using KvDb db = KvDb.Open(_dir.Path);
        Assert.Equal(stored, db.Get("app:s"u8)); // the entry (header and value) is not written again
        Assert.Equal(now.AddMinutes(1).UtcTicks, CacheEntryFormat.GetExpiresAtUtcTicks(stored));
        byte[] renewal = db.Get([0xFE, .. "app:s"u8])!;
        Assert.Equal(40, renewal.Length);
        Assert.Equal(2, renewal[0]);
        Assert.Equal(new byte[7], renewal[1..8]);
        Assert.Equal(now.AddMinutes(1).UtcTicks, BinaryPrimitives.ReadInt64LittleEndian(renewal.AsSpan(8))); // stamp: the entry's header
        Assert.Equal(long.MaxValue, BinaryPrimitives.ReadInt64LittleEndian(renewal.AsSpan(16)));
        Assert.Equal(TimeSpan.FromMinutes(1).Ticks, BinaryPrimitives.ReadInt64LittleEndian(renewal.AsSpan(24)));
        Assert.Equal(now.AddSeconds(90).UtcTicks, BinaryPrimitives.ReadInt64LittleEndian(renewal.AsSpan(32)));
    }

    [Fact]
    public void An_expired_entry_is_deleted_when_read_and_kept_until_then()
    {
        using (KvEngineCache cache = Open())
        {
            var oneSecond = new DistributedCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(1) };
            cache.Set("read", Bytes("a"), oneSecond);
            cache.Set("unread", Bytes("b"), oneSecond);
            cache.Set("refreshed", Bytes("c"), oneSecond);
            _time.Advance(TimeSpan.FromSeconds(1));
            Assert.Null(cache.Get("read"));
            cache.Refresh("refreshed");
        }
        using KvDb db = KvDb.Open(_dir.Path);
        Assert.Null(db.Get("read"u8));
        Assert.Null(db.Get("refreshed"u8));
        Assert.NotNull(db.Get("unread"u8)); // no reader yet: waits for a read (or a compaction filter)
    }

    [Fact]
    public async Task Entries_and_their_expiry_survive_closing_and_reopening()
    {
        await using (KvEngineCache cache = Open())
        {
            await cache.SetAsync("forever", Bytes("1"), new DistributedCacheEntryOptions());
            await cache.SetAsync("minute", Bytes("2"), new DistributedCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromMinutes(1) });
        }
        _time.Advance(TimeSpan.FromSeconds(59));
        await using (KvEngineCache cache = Open())
        {
            Assert.Equal(Bytes("1"), await cache.GetAsync("forever"));
            Assert.Equal(Bytes("2"), await cache.GetAsync("minute"));
        }
        _time.Advance(TimeSpan.FromSeconds(1));
        await using (KvEngineCache cache = Open())
        {
            Assert.Equal(Bytes("1"), await cache.GetAsync("forever"));
            Assert.Null(await cache.GetAsync("minute"));
        }
    }

    [Fact]
    public async Task Every_async_method_returns_a_cancelled_task_for_a_cancelled_token_and_does_nothing()
    {
        using KvEngineCache cache = Open();
        cache.Set("k", Bytes("kept"), new DistributedCacheEntryOptions());
        using var cts = new CancellationTokenSource();
        await cts.CancelAsync();
        // Called directly, not inside a lambda: a call that threw instead of returning its task fails here.
        Task[] calls =
        [
            cache.GetAsync("k", cts.Token),
            cache.SetAsync("k", Bytes("x"), new DistributedCacheEntryOptions(), cts.Token),
            cache.SetAsync("k", new ReadOnlySequence<byte>(Bytes("x")), new DistributedCacheEntryOptions(), cts.Token).AsTask(),
            cache.TryGetAsync("k", new ArrayBufferWriter<byte>(), cts.Token).AsTask(),
            cache.RefreshAsync("k", cts.Token),
            cache.RemoveAsync("k", cts.Token),
            cache.FlushAsync(cts.Token).AsTask(),
        ];
        foreach (Task call in calls)
        {
            Assert.True(call.IsCanceled, $"status {call.Status}");
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => call);
        }
        Assert.Equal(Bytes("kept"), cache.Get("k"));
    }

    [Fact]
    public async Task FlushAsync_writes_the_memtable_to_a_table_file()
    {
        await using KvEngineCache cache = Open();
        await cache.SetAsync("k", Bytes("v"), new DistributedCacheEntryOptions());
        Assert.Empty(Directory.GetFiles(_dir.Path, "*.sst"));
        await cache.FlushAsync();
        Assert.Single(Directory.GetFiles(_dir.Path, "*.sst"));
        Assert.Equal(Bytes("v"), await cache.GetAsync("k"));
    }

    [Fact]
    public void The_cache_keeps_its_own_copy_of_a_value()
    {
        using KvEngineCache cache = Open();
        byte[] value = Bytes("original");
        cache.Set("k", value, new DistributedCacheEntryOptions());
        value[0] = (byte)'X';
        byte[] read = cache.Get("k")!;
        Assert.Equal(Bytes("original"), read);
        read[0] = (byte)'Y';
        Assert.Equal(Bytes("original"), cache.Get("k"));
    }

    [Fact]
    public void A_damaged_header_is_reported_as_corruption_not_as_a_miss()
    {
        using (KvDb db = KvDb.Open(_dir.Path))
        {
            db.Put("short"u8, "abc"u8);
            byte[] badVersion = new byte[CacheEntryFormat.HeaderSize];
            badVersion[0] = 9;
            db.Put("version"u8, badVersion);
        }
        using KvEngineCache cache = Open();
        Assert.Throws<KvCorruptionException>(() => cache.Get("short"));
        Assert.Throws<KvCorruptionException>(() => cache.Get("version"));
        Assert.Throws<KvCorruptionException>(() => CacheEntryFormat.IsExpired("abc"u8, DateTimeOffset.UtcNow));
    }

    [Fact]
    public void Invalid_options_are_rejected_when_the_cache_is_created()
    {
        OptionsValidationException e = Assert.Throws<OptionsValidationException>(
            () => new KvEngineCache(Options.Create(new KvEngineCacheOptions()), _time));
        Assert.Contains("Path", e.Message, StringComparison.Ordinal);
        Assert.Throws<OptionsValidationException>(() => new KvEngineCache(
            Options.Create(new KvEngineCacheOptions { Path = _dir.Path, Compression = (KvCompressionType)99 }), _time));
        Assert.Throws<ArgumentNullException>(() => new KvEngineCache(null!, _time));
        Assert.Throws<ArgumentNullException>(() => new KvEngineCache(Options.Create(new KvEngineCacheOptions { Path = _dir.Path }), null!));
    }

    [Fact]
    public async Task A_disposed_cache_throws_ObjectDisposedException_and_disposing_twice_is_harmless()
    {
        KvEngineCache cache = Open();
        cache.Dispose();
        cache.Dispose();
        await cache.DisposeAsync();
        Assert.Throws<ObjectDisposedException>(() => cache.Get("k"));
        Assert.Throws<ObjectDisposedException>(() => cache.Set("k", [1], new DistributedCacheEntryOptions()));
        await Assert.ThrowsAsync<ObjectDisposedException>(() => cache.RemoveAsync("k"));
        using KvDb db = KvDb.Open(_dir.Path); // the directory's lock was released
    }
}
