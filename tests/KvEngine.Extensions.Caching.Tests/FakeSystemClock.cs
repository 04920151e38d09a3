using Microsoft.Extensions.Internal;

namespace KvEngine.Extensions.Caching.Tests;

/// <summary>MemoryCache's clock (ISystemClock) reading a TimeProvider. Thread-safe as the provider is.</summary>
internal sealed class FakeSystemClock(TimeProvider time) : ISystemClock
{
    public DateTimeOffset UtcNow => time.GetUtcNow();
}
