using KvEngine.Cache;
using KvEngine.Memory;

namespace KvEngine.Tests.Cache;

internal sealed class TestValueFactory : ICacheValueFactory
{
    public int Created;

    public CacheValue Create(NativeBuffer contents, in CacheKey key, CacheEntryRole role)
    {
        Created++;
        return new TestValue(contents, role);
    }
}
