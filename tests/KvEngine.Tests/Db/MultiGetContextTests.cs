using KvEngine.Db;
using KvEngine.Table;

namespace KvEngine.Tests.Db;

/// <summary>The batch sort of <see cref="MultiGetContext"/>: key order (ties by caller index), duplicates flagged, for keys sharing long prefixes, short keys and empty keys.</summary>
public sealed class MultiGetContextTests
{
    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public void SortsKeysAndFlagsDuplicates(int seed)
    {
        var rng = new Random(seed);
        for (int round = 0; round < 200; round++)
        {
            int n = rng.Next(1, 120);
            var keys = new ReadOnlyMemory<byte>[n];
            for (int i = 0; i < n; i++)
            {
                if (i > 0 && rng.Next(5) == 0)
                {
                    keys[i] = keys[rng.Next(i)].ToArray(); // an equal key in another array
                    continue;
                }
                byte[] k = new byte[rng.Next(0, 14)];
                rng.NextBytes(k);
                if (k.Length > 3 && rng.Next(2) == 0)
                {
                    "samepref"u8[..Math.Min(8, k.Length - 1)].CopyTo(k); // long shared prefixes: the full comparison decides
                }
                keys[i] = k;
            }
            MultiGetContext ctx = MultiGetContext.Rent();
            try
            {
                ctx.Prepare(keys);
                int[] expected = Enumerable.Range(0, n).ToArray();
                Array.Sort(expected, (a, b) =>
                {
                    int c = keys[a].Span.SequenceCompareTo(keys[b].Span);
                    return c != 0 ? c : a.CompareTo(b);
                });
                for (int pos = 0; pos < n; pos++)
                {
                    Assert.Equal(expected[pos], ctx.CallerIndex(pos));
                    Assert.True(ctx.Key(pos).SequenceEqual(keys[expected[pos]].Span));
                    Assert.Equal(pos > 0 && ctx.Key(pos).SequenceEqual(ctx.Key(pos - 1)), ctx.IsDuplicate(pos));
                }
            }
            finally
            {
                ctx.Return();
            }
        }
    }
}
