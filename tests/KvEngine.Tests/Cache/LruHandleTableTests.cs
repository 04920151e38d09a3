using KvEngine.Cache;

namespace KvEngine.Tests.Cache;

public class LruHandleTableTests
{
    private static LruHandle NewHandle(ulong owner, ulong offset)
    {
        var h = new LruHandle();
        h.Init(new CacheKey(owner, offset), CachePlaceholder.Instance, 1, highPriority: false);
        return h;
    }

    [Fact]
    public void RandomOperationsMatchADictionary()
    {
        var table = new LruHandleTable();
        var model = new Dictionary<CacheKey, LruHandle>();
        var random = new Random(1234);
        for (int step = 0; step < 200_000; step++)
        {
            // Few owners and offsets, so keys repeat: replacements and removals of present keys.
            var key = new CacheKey((ulong)random.Next(4), (ulong)random.Next(20_000) * 4096);
            switch (random.Next(10))
            {
                case < 5:
                    LruHandle h = NewHandle(key.OwnerId, key.Offset);
                    LruHandle? replaced = table.Insert(h);
                    Assert.Same(model.GetValueOrDefault(key), replaced);
                    Assert.Null(replaced?.NextHash);
                    model[key] = h;
                    break;
                case < 8:
                    Assert.Same(model.GetValueOrDefault(key), table.Lookup(key));
                    break;
                default:
                    LruHandle? removed = table.Remove(key);
                    Assert.Same(model.GetValueOrDefault(key), removed);
                    Assert.Null(removed?.NextHash);
                    model.Remove(key);
                    break;
            }
            Assert.Equal(model.Count, table.Count);
        }
        var seen = new HashSet<CacheKey>();
        foreach (LruHandle h in table)
        {
            Assert.True(seen.Add(h.Key));
            Assert.Same(model[h.Key], h);
        }
        Assert.Equal(model.Count, seen.Count);
        Assert.True(model.Count > 10_000); // the table grew many times
    }

    [Fact]
    public void AnEmptyTableFindsAndEnumeratesNothing()
    {
        var table = new LruHandleTable();
        Assert.Null(table.Lookup(new CacheKey(1, 2)));
        Assert.Null(table.Remove(new CacheKey(1, 2)));
        foreach (LruHandle h in table)
        {
            Assert.Fail($"unexpected {h.Key}");
        }
        Assert.Equal(0, table.Count);
    }
}
