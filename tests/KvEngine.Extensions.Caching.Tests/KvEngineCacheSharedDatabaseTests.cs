using System.Text;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;

namespace KvEngine.Extensions.Caching.Tests;

/// <summary>
/// Several caches of one process on one path share its database, each under its InstanceName:
/// isolated keys, removals and expiry across names, shared entries within a name, and the
/// database closed with the last cache.
/// </summary>
public sealed class KvEngineCacheSharedDatabaseTests : IDisposable
{
    private readonly TempDirectory _dir = new();
    private readonly FakeTimeProvider _time = new(new DateTimeOffset(2030, 1, 1, 0, 0, 0, TimeSpan.Zero));

    public void Dispose() => _dir.Dispose();

    private KvEngineCache Open(string? instanceName, string? path = null) =>
        new(Options.Create(new KvEngineCacheOptions { Path = path ?? _dir.Path, InstanceName = instanceName }), _time);

    private static byte[] Bytes(string s) => Encoding.UTF8.GetBytes(s);

    [Fact]
    public void Caches_with_different_instance_names_share_the_database_and_see_only_their_keys()
    {
        using KvEngineCache users = Open("users:");
        using KvEngineCache orders = Open("orders:", _dir.Path + Path.DirectorySeparatorChar); // the same directory, spelled differently
        Assert.Same(users.Database, orders.Database);
        Assert.Equal(2, SharedCacheDatabase.ReferencesTo(_dir.Path));

        users.Set("42", Bytes("alice"), new DistributedCacheEntryOptions());
        orders.Set("42", Bytes("order #42"), new DistributedCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromMinutes(1) });
        users.Set("only-users", Bytes("u"), new DistributedCacheEntryOptions());
        Assert.Equal(Bytes("alice"), users.Get("42"));
        Assert.Equal(Bytes("order #42"), orders.Get("42"));
        Assert.Null(orders.Get("only-users"));

        orders.Remove("only-users"); // another cache's key of the same name: untouched
        Assert.Equal(Bytes("u"), users.Get("only-users"));

        _time.Advance(TimeSpan.FromMinutes(1)); // expiry is per entry: the orders entry goes, the users one stays
        Assert.Null(orders.Get("42"));
        Assert.Equal(Bytes("alice"), users.Get("42"));
        users.Remove("42");
        Assert.Null(users.Get("42"));
        Assert.Equal(Bytes("u"), users.Get("only-users"));
    }

    [Fact]
    public void Caches_with_the_same_instance_name_see_each_others_entries()
    {
        using KvEngineCache a = Open("app:");
        using KvEngineCache b = Open("app:");
        a.Set("k", Bytes("from a"), new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromMinutes(1) });
        Assert.Equal(Bytes("from a"), b.Get("k"));
        _time.Advance(TimeSpan.FromSeconds(40));
        Assert.NotNull(b.Get("k")); // b's read renews the entry for a too
        _time.Advance(TimeSpan.FromSeconds(40));
        Assert.Equal(Bytes("from a"), a.Get("k"));
        b.Remove("k");
        Assert.Null(a.Get("k"));
    }

    [Fact]
    public void The_last_cache_disposed_closes_the_database_and_the_path_opens_again()
    {
        KvEngineCache first = Open("a:");
        KvEngineCache second = Open("b:");
        first.Set("k", Bytes("v"), new DistributedCacheEntryOptions());
        first.Dispose();
        first.Dispose(); // idempotent: releases its share once
        Assert.Equal(1, SharedCacheDatabase.ReferencesTo(_dir.Path));
        Assert.Throws<ObjectDisposedException>(() => first.Get("k"));
        second.Set("k", Bytes("w"), new DistributedCacheEntryOptions()); // still open for the other cache
        Assert.Throws<KvLockHeldException>(() => KvDb.Open(_dir.Path)); // and its LOCK held
        second.Dispose();
        Assert.Equal(0, SharedCacheDatabase.ReferencesTo(_dir.Path));
        using (KvDb db = KvDb.Open(_dir.Path))
        {
            Assert.Equal(Bytes("w"), db.Get("b:k"u8)![CacheEntryFormat.HeaderSize..]);
        }
        using KvEngineCache again = Open("a:");
        Assert.Equal(Bytes("v"), again.Get("k"));
    }

    [Fact]
    public async Task A_failed_open_releases_the_path()
    {
        string file = Path.Combine(_dir.Path, "not-a-directory");
        await File.WriteAllTextAsync(file, "x");
        Exception e = Assert.ThrowsAny<Exception>(() => Open(null, file));
        Assert.True(e is KvException or IOException, e.ToString());
        Assert.Equal(0, SharedCacheDatabase.ReferencesTo(file));
    }

    [Fact]
    public void An_open_after_the_last_release_is_refused_and_leaves_the_directory_free()
    {
        // A host disposed while its start was still opening the database: the open must not win.
        SharedCacheDatabase shared = SharedCacheDatabase.Acquire(_dir.Path);
        shared.Release();
        Assert.Throws<ObjectDisposedException>(() => shared.Open(() => (new KvOptions(), null)));
        using KvDb db = KvDb.Open(_dir.Path); // no LOCK left behind
    }
}
