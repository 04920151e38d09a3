using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Caching.Memory;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;

namespace KvEngine.Extensions.Caching.Tests;

/// <summary>The conformance tests against the framework's reference implementation.</summary>
public sealed class MemoryDistributedCacheConformanceTests : DistributedCacheConformanceTests
{
    protected override IDistributedCache CreateCache(FakeTimeProvider time) =>
        new MemoryDistributedCache(Options.Create(new MemoryDistributedCacheOptions { Clock = new FakeSystemClock(time) }));
}
