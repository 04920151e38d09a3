using System.Runtime.InteropServices;
using KvEngine.Cache;

namespace KvEngine.Tests.Cache;

public unsafe class LruHandleTableTests
{
    /// <summary>Native entries for one test, freed together.</summary>
    private sealed class Entries : IDisposable
    {
        private readonly List<nint> _all = [];

        public LruEntry* New(in CacheKey key)
        {
            var e = (LruEntry*)NativeMemory.AllocZeroed((nuint)sizeof(LruEntry));
            _all.Add((nint)e);
            e->OwnerId = key.OwnerId;
            e->Offset = key.Offset;
            e->Charge = 1;
            return e;
        }

        public void Dispose()
        {
            foreach (nint p in _all)
            {
                NativeMemory.Free((void*)p);
            }
        }
    }

    [Fact]
    public void AnEntryIsSixtyFourBytes() => Assert.Equal(64, sizeof(LruEntry));

    [Fact]
    public void RandomOperationsMatchADictionary()
    {
        using var entries = new Entries();
        var table = new LruHandleTable();
        var model = new Dictionary<CacheKey, nint>();
        var random = new Random(1234);
        for (int step = 0; step < 200_000; step++)
        {
            // Few owners and offsets, so keys repeat: replacements and removals of present keys.
            var key = new CacheKey((ulong)random.Next(4), (ulong)random.Next(20_000) * 4096);
            switch (random.Next(10))
            {
                case < 5:
                    LruEntry* h = entries.New(key);
                    LruEntry* replaced = table.Insert(h);
                    Assert.Equal(model.GetValueOrDefault(key), (nint)replaced);
                    Assert.True(replaced == null || replaced->NextHash == null);
                    model[key] = (nint)h;
                    break;
                case < 8:
                    Assert.Equal(model.GetValueOrDefault(key), (nint)table.Lookup(key));
                    break;
                default:
                    LruEntry* removed = table.Remove(key);
                    Assert.Equal(model.GetValueOrDefault(key), (nint)removed);
                    Assert.True(removed == null || removed->NextHash == null);
                    model.Remove(key);
                    break;
            }
            Assert.Equal(model.Count, table.Count);
        }
        var seen = new HashSet<CacheKey>();
        foreach (LruHandle h in table)
        {
            Assert.True(seen.Add(h.Key));
            Assert.Equal(model[h.Key], (nint)h.Entry);
        }
        Assert.Equal(model.Count, seen.Count);
        Assert.True(model.Count > 10_000); // the table grew many times
    }

    [Fact]
    public void AnEmptyTableFindsAndEnumeratesNothing()
    {
        var table = new LruHandleTable();
        Assert.True(table.Lookup(new CacheKey(1, 2)) == null);
        Assert.True(table.Remove(new CacheKey(1, 2)) == null);
        foreach (LruHandle h in table)
        {
            Assert.Fail($"unexpected {h.Key}");
        }
        Assert.Equal(0, table.Count);
    }
}
