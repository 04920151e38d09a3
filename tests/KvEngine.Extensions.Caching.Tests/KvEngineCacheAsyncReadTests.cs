using System.Buffers;
using KvEngine.Storage.IO;
using KvEngine.Tests.Db;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;

namespace KvEngine.Extensions.Caching.Tests;

/// <summary>
/// GetAsync and TryGetAsync of an entry whose blocks are not cached go through the database's
/// asynchronous read: pending while the I/O engine holds the read, with the value once it is
/// released (deterministic: the held read is checked before the call could complete).
/// </summary>
public sealed class KvEngineCacheAsyncReadTests : IDisposable
{
    private readonly TempDirectory _dir = new();
    private readonly FakeTimeProvider _time = new(new DateTimeOffset(2030, 1, 1, 0, 0, 0, TimeSpan.Zero));

    public void Dispose() => _dir.Dispose();

    [Fact]
    public async Task ColdReadsWaitForTheEngineWithoutBlocking()
    {
        byte[] value = new byte[300];
        new Random(7).NextBytes(value);
        using (var cache = new KvEngineCache(Options.Create(new KvEngineCacheOptions { Path = _dir.Path }), _time))
        {
            cache.Set("k", value, new DistributedCacheEntryOptions());
            cache.OpenedDatabase!.Flush(); // into a table: a read after reopening needs its blocks
        }
        var engine = new HoldingBlockReadEngine(BlockReadEngines.Create(new BlockReadEngineOptions { Kind = BlockReadEngineKind.ThreadPool })) { Holding = true };
        var options = new KvEngineCacheOptions { Path = _dir.Path, ConfigureDatabaseOptions = o => o.BlockReadEngine = engine };
        using var reopened = new KvEngineCache(Options.Create(options), _time);
        var writer = new ArrayBufferWriter<byte>();
        ValueTask<bool> pending = reopened.TryGetAsync("k", writer);
        Task<byte[]?> pendingGet = reopened.GetAsync("k");
        Assert.False(pending.IsCompleted); // a synchronous read would have completed them
        Assert.False(pendingGet.IsCompleted);
        Assert.True(engine.FirstHeld.IsCompleted);
        engine.Release();
        Assert.True(await pending);
        Assert.Equal(value, writer.WrittenSpan.ToArray());
        Assert.Equal(value, await pendingGet);
        Assert.True(engine.Reads > 0);
    }
}
