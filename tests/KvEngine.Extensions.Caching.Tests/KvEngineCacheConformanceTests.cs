using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;

namespace KvEngine.Extensions.Caching.Tests;

/// <summary>The conformance tests against <see cref="KvEngineCache"/>, in a fresh directory per test.</summary>
public sealed class KvEngineCacheConformanceTests : DistributedCacheConformanceTests
{
    private readonly TempDirectory _dir = new();

    protected override IDistributedCache CreateCache(FakeTimeProvider time) =>
        new KvEngineCache(Options.Create(new KvEngineCacheOptions { Path = _dir.Path }), time);

    public override async Task DisposeAsync()
    {
        await base.DisposeAsync();
        _dir.Dispose();
    }
}
