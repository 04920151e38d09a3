using System.Text;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Time.Testing;

namespace KvEngine.Extensions.Caching.Tests;

/// <summary>
/// The <see cref="IDistributedCache"/> contract as a reusable test class: derive from it and
/// create the cache under test with the given clock. Run against MemoryDistributedCache as well,
/// so the expectations themselves are checked against the framework's reference implementation.
/// Time is a <see cref="FakeTimeProvider"/>: no test depends on the wall clock. Each test gets a
/// fresh cache (xUnit creates one instance per test); not thread-safe beyond what tests do.
/// </summary>
public abstract class DistributedCacheConformanceTests : IAsyncLifetime
{
    private IDistributedCache? _cache;

    protected FakeTimeProvider Time { get; } = new(new DateTimeOffset(2030, 1, 1, 0, 0, 0, TimeSpan.Zero));

    protected IDistributedCache Cache => _cache ?? throw new InvalidOperationException("Not initialized.");

    /// <summary>Creates the cache under test, measuring expiry against <paramref name="time"/>.</summary>
    protected abstract IDistributedCache CreateCache(FakeTimeProvider time);

    public Task InitializeAsync()
    {
        _cache = CreateCache(Time);
        return Task.CompletedTask;
    }

    public virtual async Task DisposeAsync()
    {
        switch (_cache)
        {
            case IAsyncDisposable ad:
                await ad.DisposeAsync();
                break;
            case IDisposable d:
                d.Dispose();
                break;
        }
    }

    private static readonly DistributedCacheEntryOptions s_noExpiry = new();

    private Task<byte[]?> Get(string key, bool useAsync) =>
        useAsync ? Cache.GetAsync(key) : Task.FromResult(Cache.Get(key));

    private Task Set(string key, byte[] value, DistributedCacheEntryOptions options, bool useAsync)
    {
        if (useAsync)
        {
            return Cache.SetAsync(key, value, options);
        }
        Cache.Set(key, value, options);
        return Task.CompletedTask;
    }

    private Task Refresh(string key, bool useAsync)
    {
        if (useAsync)
        {
            return Cache.RefreshAsync(key);
        }
        Cache.Refresh(key);
        return Task.CompletedTask;
    }

    private Task Remove(string key, bool useAsync)
    {
        if (useAsync)
        {
            return Cache.RemoveAsync(key);
        }
        Cache.Remove(key);
        return Task.CompletedTask;
    }

    private static byte[] Bytes(string s) => Encoding.UTF8.GetBytes(s);

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_key_never_set_reads_null(bool useAsync)
    {
        Assert.Null(await Get("never-set", useAsync));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Set_then_get_returns_the_same_bytes_and_a_second_set_replaces_them(bool useAsync)
    {
        await Set("k", Bytes("first"), s_noExpiry, useAsync);
        Assert.Equal(Bytes("first"), await Get("k", useAsync));
        await Set("k", Bytes("second, longer"), s_noExpiry, useAsync);
        Assert.Equal(Bytes("second, longer"), await Get("k", useAsync));
        Assert.Null(await Get("K", useAsync)); // keys are case-sensitive
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Remove_removes_only_that_key_and_removing_a_missing_key_is_not_an_error(bool useAsync)
    {
        await Set("a", Bytes("1"), s_noExpiry, useAsync);
        await Set("b", Bytes("2"), s_noExpiry, useAsync);
        await Remove("a", useAsync);
        Assert.Null(await Get("a", useAsync));
        Assert.Equal(Bytes("2"), await Get("b", useAsync));
        await Remove("a", useAsync);
        await Remove("never-set", useAsync);
        await Refresh("never-set", useAsync);
        Assert.Null(await Get("never-set", useAsync));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task An_entry_without_expiration_never_expires(bool useAsync)
    {
        await Set("k", Bytes("v"), s_noExpiry, useAsync);
        Time.Advance(TimeSpan.FromDays(3650));
        Assert.Equal(Bytes("v"), await Get("k", useAsync));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Absolute_expiration_expires_the_entry_at_that_instant(bool useAsync)
    {
        DateTimeOffset at = Time.GetUtcNow().AddMinutes(10);
        await Set("k", Bytes("v"), new DistributedCacheEntryOptions { AbsoluteExpiration = at }, useAsync);
        Time.SetUtcNow(at.AddTicks(-TimeSpan.TicksPerMillisecond));
        Assert.Equal(Bytes("v"), await Get("k", useAsync));
        Time.SetUtcNow(at);
        Assert.Null(await Get("k", useAsync));
        Time.Advance(TimeSpan.FromDays(1));
        Assert.Null(await Get("k", useAsync));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Absolute_expiration_relative_to_now_expires_the_entry_that_long_after_the_set(bool useAsync)
    {
        await Set("k", Bytes("v"), new DistributedCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(30) }, useAsync);
        Time.Advance(TimeSpan.FromSeconds(29));
        Assert.Equal(Bytes("v"), await Get("k", useAsync));
        await Refresh("k", useAsync); // no sliding expiration: nothing to extend
        Time.Advance(TimeSpan.FromSeconds(1));
        Assert.Null(await Get("k", useAsync));
    }

    [Theory]
    [InlineData(false, 10, 20)]
    [InlineData(false, 20, 10)]
    [InlineData(true, 10, 20)]
    [InlineData(true, 20, 10)]
    public async Task With_both_absolute_expirations_the_earlier_one_wins(bool useAsync, int absoluteSeconds, int relativeSeconds)
    {
        DateTimeOffset start = Time.GetUtcNow();
        var options = new DistributedCacheEntryOptions
        {
            AbsoluteExpiration = start.AddSeconds(absoluteSeconds),
            AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(relativeSeconds),
        };
        await Set("k", Bytes("v"), options, useAsync);
        int earlier = Math.Min(absoluteSeconds, relativeSeconds);
        Time.SetUtcNow(start.AddSeconds(earlier).AddMilliseconds(-1));
        Assert.Equal(Bytes("v"), await Get("k", useAsync));
        Time.SetUtcNow(start.AddSeconds(earlier));
        Assert.Null(await Get("k", useAsync));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Sliding_expiration_is_reset_by_every_read(bool useAsync)
    {
        await Set("k", Bytes("v"), new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromSeconds(10) }, useAsync);
        for (int i = 0; i < 5; i++)
        {
            Time.Advance(TimeSpan.FromSeconds(9)); // 45 s in all: far past one window
            Assert.Equal(Bytes("v"), await Get("k", useAsync));
        }
        Time.Advance(TimeSpan.FromSeconds(10)); // a whole window without access
        Assert.Null(await Get("k", useAsync));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Refresh_resets_the_sliding_expiration_without_reading(bool useAsync)
    {
        await Set("k", Bytes("v"), new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromSeconds(10) }, useAsync);
        Time.Advance(TimeSpan.FromSeconds(8));
        await Refresh("k", useAsync);
        Time.Advance(TimeSpan.FromSeconds(8)); // 16 s after the set, 8 s after the refresh
        await Refresh("k", useAsync);
        Time.Advance(TimeSpan.FromSeconds(9));
        Assert.Equal(Bytes("v"), await Get("k", useAsync));
        Time.Advance(TimeSpan.FromSeconds(10));
        await Refresh("k", useAsync); // too late: expired
        Assert.Null(await Get("k", useAsync));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Sliding_expiration_never_extends_past_the_absolute_expiration(bool useAsync)
    {
        var options = new DistributedCacheEntryOptions
        {
            SlidingExpiration = TimeSpan.FromSeconds(10),
            AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(25),
        };
        await Set("k", Bytes("v"), options, useAsync);
        Time.Advance(TimeSpan.FromSeconds(9));
        Assert.Equal(Bytes("v"), await Get("k", useAsync));
        Time.Advance(TimeSpan.FromSeconds(9));
        await Refresh("k", useAsync);
        Time.Advance(TimeSpan.FromSeconds(6)); // 24 s: within both
        Assert.Equal(Bytes("v"), await Get("k", useAsync));
        Time.Advance(TimeSpan.FromSeconds(1)); // 25 s: the absolute expiration, though read 1 s ago
        Assert.Null(await Get("k", useAsync));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Sliding_with_a_fixed_absolute_expiration_expires_by_whichever_comes_first(bool useAsync)
    {
        DateTimeOffset start = Time.GetUtcNow();
        var options = new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromSeconds(10), AbsoluteExpiration = start.AddHours(1) };
        await Set("k", Bytes("v"), options, useAsync);
        Time.Advance(TimeSpan.FromSeconds(10)); // the sliding window passes first
        Assert.Null(await Get("k", useAsync));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_set_whose_expiration_has_passed_removes_the_key(bool useAsync)
    {
        await Set("k", Bytes("old"), s_noExpiry, useAsync);
        await Set("k", Bytes("new"), new DistributedCacheEntryOptions { AbsoluteExpiration = Time.GetUtcNow().AddSeconds(-1) }, useAsync);
        Assert.Null(await Get("k", useAsync));
        await Set("k", Bytes("now"), new DistributedCacheEntryOptions { AbsoluteExpiration = Time.GetUtcNow() }, useAsync);
        Assert.Null(await Get("k", useAsync));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task An_expired_key_can_be_set_again(bool useAsync)
    {
        await Set("k", Bytes("v1"), new DistributedCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(1) }, useAsync);
        Time.Advance(TimeSpan.FromSeconds(2));
        Assert.Null(await Get("k", useAsync));
        await Set("k", Bytes("v2"), s_noExpiry, useAsync);
        Assert.Equal(Bytes("v2"), await Get("k", useAsync));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Empty_values_and_keys_are_stored_like_any_other(bool useAsync)
    {
        await Set("empty", [], s_noExpiry, useAsync);
        Assert.Equal(Array.Empty<byte>(), await Get("empty", useAsync));
        await Set("", Bytes("under the empty key"), s_noExpiry, useAsync);
        Assert.Equal(Bytes("under the empty key"), await Get("", useAsync));
        await Remove("", useAsync);
        Assert.Null(await Get("", useAsync));
        Assert.Equal(Array.Empty<byte>(), await Get("empty", useAsync));
    }

    [Fact]
    public async Task Strings_round_trip_as_utf8_through_the_extension_methods()
    {
        const string Text = "naïve café: ключ 値 🔑";
        Cache.SetString("ключ:🔑", Text);
        Assert.Equal(Text, Cache.GetString("ключ:🔑"));
        Assert.Equal(Encoding.UTF8.GetBytes(Text), Cache.Get("ключ:🔑"));
        await Cache.SetStringAsync("s2", Text, new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromSeconds(5) });
        Assert.Equal(Text, await Cache.GetStringAsync("s2"));
        Assert.Null(Cache.GetString("ключ:🔒"));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Large_values_round_trip(bool useAsync)
    {
        byte[] large = new byte[8 << 20];
        new Random(15).NextBytes(large);
        await Set("large", large, s_noExpiry, useAsync);
        Assert.Equal(large, await Get("large", useAsync));
        byte[] other = new byte[(1 << 20) + 3];
        new Random(16).NextBytes(other);
        await Set("large", other, s_noExpiry, useAsync);
        Assert.Equal(other, await Get("large", useAsync));
    }

    [Fact]
    public async Task Null_arguments_throw_ArgumentNullException()
    {
        var options = new DistributedCacheEntryOptions();
        Assert.Throws<ArgumentNullException>(() => Cache.Get(null!));
        Assert.Throws<ArgumentNullException>(() => Cache.Set(null!, [1], options));
        Assert.Throws<ArgumentNullException>(() => Cache.Set("k", null!, options));
        Assert.Throws<ArgumentNullException>(() => Cache.Set("k", [1], null!));
        Assert.Throws<ArgumentNullException>(() => Cache.Refresh(null!));
        Assert.Throws<ArgumentNullException>(() => Cache.Remove(null!));
        await Assert.ThrowsAsync<ArgumentNullException>(() => Cache.GetAsync(null!));
        await Assert.ThrowsAsync<ArgumentNullException>(() => Cache.SetAsync(null!, [1], options));
        await Assert.ThrowsAsync<ArgumentNullException>(() => Cache.SetAsync("k", null!, options));
        await Assert.ThrowsAsync<ArgumentNullException>(() => Cache.SetAsync("k", [1], null!));
        await Assert.ThrowsAsync<ArgumentNullException>(() => Cache.RefreshAsync(null!));
        await Assert.ThrowsAsync<ArgumentNullException>(() => Cache.RemoveAsync(null!));
        Assert.Null(Cache.Get("k")); // nothing was stored by the failed calls
    }

    [Fact]
    public async Task An_async_call_with_a_canceled_token_either_throws_without_acting_or_completes_in_full()
    {
        // IDistributedCache lets an implementation ignore the token (MemoryDistributedCache
        // completes its reads regardless); what it must not do is throw after acting, or act halfway.
        Cache.Set("k", Bytes("kept"), s_noExpiry);
        using var cts = new CancellationTokenSource();
        await cts.CancelAsync();

        byte[]? read = null;
        if (!await IsCanceled(async () => read = await Cache.GetAsync("k", cts.Token)))
        {
            Assert.Equal(Bytes("kept"), read);
        }
        bool setCanceled = await IsCanceled(() => Cache.SetAsync("k", Bytes("replaced"), s_noExpiry, cts.Token));
        Assert.Equal(Bytes(setCanceled ? "kept" : "replaced"), Cache.Get("k"));
        bool newCanceled = await IsCanceled(() => Cache.SetAsync("other", Bytes("x"), s_noExpiry, cts.Token));
        Assert.Equal(newCanceled ? null : Bytes("x"), Cache.Get("other"));
        await IsCanceled(() => Cache.RefreshAsync("k", cts.Token));
        bool removeCanceled = await IsCanceled(() => Cache.RemoveAsync("k", cts.Token));
        Assert.Equal(removeCanceled, Cache.Get("k") != null);
    }

    private static async Task<bool> IsCanceled(Func<Task> call)
    {
        try
        {
            await call();
            return false;
        }
        catch (OperationCanceledException)
        {
            return true;
        }
    }

    [Fact]
    public async Task Concurrent_callers_see_only_whole_values_and_no_write_is_lost_to_a_sliding_refresh()
    {
        const int Keys = 16;
        const int Writes = 200;
        var sliding = new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromMinutes(5) };
        // One writer per key writes increasing versions; readers read (and so refresh) every key
        // meanwhile. A refresh that rewrote an older version over a newer one would be a lost write.
        Task[] writers = Enumerable.Range(0, Keys).Select(k => Task.Run(async () =>
        {
            for (int v = 0; v < Writes; v++)
            {
                byte[] value = Bytes($"key{k}:version{v:D4}:" + new string((char)('a' + (k % 26)), k * 10));
                if (v % 2 == 0)
                {
                    Cache.Set($"key{k}", value, sliding);
                }
                else
                {
                    await Cache.SetAsync($"key{k}", value, sliding);
                }
            }
        })).ToArray();
        using var stop = new CancellationTokenSource();
        int reads = 0;
        Task[] readers = Enumerable.Range(0, 4).Select(r => Task.Run(async () =>
        {
            while (!stop.IsCancellationRequested)
            {
                for (int k = 0; k < Keys; k++)
                {
                    Time.Advance(TimeSpan.FromMilliseconds(1)); // so that every read moves the sliding expiry
                    byte[]? v = r % 2 == 0 ? Cache.Get($"key{k}") : await Cache.GetAsync($"key{k}");
                    if (v != null)
                    {
                        string s = Encoding.UTF8.GetString(v);
                        Assert.StartsWith($"key{k}:version", s, StringComparison.Ordinal);
                        Assert.Equal($"key{k}:version0000:".Length + k * 10, s.Length);
                        Interlocked.Increment(ref reads);
                    }
                    await Cache.RefreshAsync($"key{k}");
                }
            }
        })).ToArray();
        await Task.WhenAll(writers);
        await stop.CancelAsync();
        await Task.WhenAll(readers);
        for (int k = 0; k < Keys; k++)
        {
            Assert.Equal(Bytes($"key{k}:version{Writes - 1:D4}:" + new string((char)('a' + (k % 26)), k * 10)), Cache.Get($"key{k}"));
        }
    }
}
