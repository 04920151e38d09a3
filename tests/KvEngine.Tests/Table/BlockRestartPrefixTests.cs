using KvEngine.Format;
using KvEngine.Table;

namespace KvEngine.Tests.Table;

/// <summary>
/// Seeks through a block's restart prefixes land exactly where the plain binary search over the
/// entries does: keys sharing their first 8 bytes, keys shorter than 8 bytes (zero-padded prefixes
/// that tie with longer keys), equal user keys at several sequences, and targets between, before
/// and after every key; for internal-key, user-key-index and bytewise blocks.
/// </summary>
public class BlockRestartPrefixTests
{
    [Theory]
    [InlineData((int)BlockKeyFormat.InternalKey, 1, 3)]
    [InlineData((int)BlockKeyFormat.InternalKey, 4, 4)]
    [InlineData((int)BlockKeyFormat.UserKeyIndex, 1, 5)]
    [InlineData((int)BlockKeyFormat.Bytewise, 1, 6)]
    [InlineData((int)BlockKeyFormat.Bytewise, 3, 7)]
    public void PrefixSeeksMatchTheEntrySearch(int keyFormat, int restartInterval, int seed)
    {
        var format = (BlockKeyFormat)keyFormat;
        var rnd = new Random(seed);
        var users = new SortedSet<byte[]>(Comparer<byte[]>.Create((a, b) => a.AsSpan().SequenceCompareTo(b)));
        while (users.Count < 1500)
        {
            users.Add(RandomUserKey(rnd));
        }
        var keys = new List<byte[]>();
        foreach (byte[] user in users)
        {
            if (format == BlockKeyFormat.InternalKey)
            {
                int versions = rnd.Next(3) == 0 ? 3 : 1;
                for (int v = 0; v < versions; v++)
                {
                    keys.Add(InternalKeys.Create(user, (ulong)(1000 - (v * 10)), KvEngine.Format.ValueType.Value));
                }
            }
            else
            {
                keys.Add(user);
            }
        }
        using var builder = new BlockBuilder(restartInterval);
        foreach (byte[] key in keys)
        {
            builder.Add(key, [1, 2, 3]);
        }
        byte[] bytes = builder.Finish().ToArray();
        var plain = new Block(bytes, bytes.Length, pooled: false, isDataBlock: false, "plain");
        using var fast = new Block(bytes, bytes.Length, pooled: false, isDataBlock: false, "fast");
        var withPrefixes = new BlockCursor(fast, format);
        withPrefixes.BuildRestartPrefixes();
        Assert.Equal(fast.NumRestarts, fast.RestartPrefixes.Length);
        Assert.True(plain.RestartPrefixes.IsEmpty);
        var without = new BlockCursor(plain, format);
        try
        {
            var targets = new List<byte[]>();
            foreach (byte[] user in users)
            {
                targets.Add(user);
                targets.Add([.. user, 0]);
                if (user.Length > 0)
                {
                    targets.Add(user[..^1]);
                }
            }
            for (int i = 0; i < 2000; i++)
            {
                targets.Add(RandomUserKey(rnd));
            }
            targets.Add([]);
            targets.Add([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]);
            foreach (byte[] user in targets)
            {
                foreach (ulong sequence in (ReadOnlySpan<ulong>)[2000, 995, 990, 1])
                {
                    byte[] target = format == BlockKeyFormat.Bytewise ? user : InternalKeys.Create(user, sequence, KvEngine.Format.ValueType.ValueTypeForSeek);
                    withPrefixes.Seek(target);
                    without.Seek(target);
                    Assert.Equal(without.Valid, withPrefixes.Valid);
                    if (without.Valid)
                    {
                        Assert.True(without.Key.SequenceEqual(withPrefixes.Key));
                    }
                    if (format == BlockKeyFormat.Bytewise)
                    {
                        break;
                    }
                }
            }
        }
        finally
        {
            withPrefixes.Dispose();
            without.Dispose();
        }
    }

    private static byte[] RandomUserKey(Random rnd)
    {
        // A small alphabet and a shared 8-byte head for a third of the keys: many prefix ties.
        var key = new byte[rnd.Next(0, 14)];
        for (int i = 0; i < key.Length; i++)
        {
            key[i] = (byte)rnd.Next(0, 3);
        }
        if (key.Length >= 8 && rnd.Next(3) == 0)
        {
            key.AsSpan(0, 8).Fill(1);
        }
        return key;
    }

    [Fact]
    public void BlocksWithFewRestartsGetNone()
    {
        using var builder = new BlockBuilder(1);
        for (int i = 0; i < 10; i++)
        {
            builder.Add([(byte)i], [1]);
        }
        byte[] bytes = builder.Finish().ToArray();
        var block = new Block(bytes, bytes.Length, pooled: false, isDataBlock: false, "small");
        var cursor = new BlockCursor(block, BlockKeyFormat.Bytewise);
        cursor.BuildRestartPrefixes();
        cursor.Dispose();
        Assert.True(block.RestartPrefixes.IsEmpty);
    }

    [Fact]
    public void DisposingTheBlockFreesItsPrefixes()
    {
        using var builder = new BlockBuilder(1);
        for (int i = 0; i < 100; i++)
        {
            builder.Add([(byte)i], [1]);
        }
        byte[] bytes = builder.Finish().ToArray();
        var block = new Block(bytes, bytes.Length, pooled: false, isDataBlock: false, "index");
        var cursor = new BlockCursor(block, BlockKeyFormat.Bytewise);
        cursor.BuildRestartPrefixes();
        cursor.Dispose();
        Assert.Equal(100, block.RestartPrefixes.Length);
        Assert.True(block.RestartPrefixBytes >= 100 * sizeof(ulong));
        block.Dispose();
        Assert.True(block.RestartPrefixes.IsEmpty);
        Assert.Equal(0, block.RestartPrefixBytes);
        block.Dispose(); // a second Dispose frees nothing twice
    }

    [Theory]
    [InlineData(new byte[0], 0UL)]
    [InlineData(new byte[] { 1 }, 0x0100_0000_0000_0000UL)]
    [InlineData(new byte[] { 1, 2, 3, 4, 5, 6, 7, 8, 9 }, 0x0102_0304_0506_0708UL)]
    public void PrefixIsTheBigEndianHead(byte[] key, ulong expected) => Assert.Equal(expected, KeyPrefix.Of(key));
}
