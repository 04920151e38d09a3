using System.Text;
using KvEngine.Cache;
using KvEngine.Format;
using KvEngine.Memory;
using KvEngine.Table;
using KvEngine.Util;

namespace KvEngine.Tests.Table;

public class BlockTests
{
    private static List<(byte[] Key, byte[] Value)> Entries(int n)
    {
        var list = new List<(byte[], byte[])>();
        for (int i = 0; i < n; i++)
        {
            // Shared prefixes of varying length exercise prefix compression.
            byte[] user = Encoding.ASCII.GetBytes($"prefix/{i / 10:D3}/{i:D5}");
            list.Add((InternalKeys.Create(user, (ulong)(100_000 - i), KvEngine.Format.ValueType.Value), Encoding.ASCII.GetBytes($"value-{i}")));
        }
        return list;
    }

    private static Block BuildBlock(List<(byte[] Key, byte[] Value)> entries, int restartInterval, out byte[] bytes)
    {
        using var builder = new BlockBuilder(restartInterval);
        foreach ((byte[] k, byte[] v) in entries)
        {
            builder.Add(k, v);
        }
        bytes = builder.Finish().ToArray();
        Assert.Equal(bytes.Length, builder.CurrentSizeEstimate);
        return new Block(bytes, bytes.Length, pooled: false, isDataBlock: true, "test");
    }

    [Theory]
    [InlineData(1, 1)]
    [InlineData(16, 1)]
    [InlineData(1, 100)]
    [InlineData(16, 100)]
    [InlineData(7, 333)]
    public void ForwardBackwardAndSeeksMatchTheEntries(int restartInterval, int n)
    {
        var entries = Entries(n);
        Block block = BuildBlock(entries, restartInterval, out _);
        Assert.Equal((n + restartInterval - 1) / restartInterval, block.NumRestarts);
        var c = new BlockCursor(block, BlockKeyFormat.InternalKey);
        try
        {
            int i = 0;
            for (c.SeekToFirst(); c.Valid; c.Next(), i++)
            {
                Assert.Equal(entries[i].Key, c.Key.ToArray());
                Assert.Equal(entries[i].Value, c.Value.ToArray());
            }
            Assert.Equal(n, i);
            i = n - 1;
            for (c.SeekToLast(); c.Valid; c.Prev(), i--)
            {
                Assert.Equal(entries[i].Key, c.Key.ToArray());
            }
            Assert.Equal(-1, i);

            for (int j = 0; j < n; j++)
            {
                c.Seek(entries[j].Key);
                Assert.True(c.Valid);
                Assert.Equal(entries[j].Key, c.Key.ToArray());
                c.SeekForPrev(entries[j].Key);
                Assert.Equal(entries[j].Key, c.Key.ToArray());

                // A target just after entry j (same user key, older sequence) lands on j + 1 / j.
                byte[] after = InternalKeys.Create(InternalKeys.UserKey(entries[j].Key), InternalKeys.Sequence(entries[j].Key) - 1, KvEngine.Format.ValueType.Value);
                c.Seek(after);
                if (j + 1 < n)
                {
                    Assert.Equal(entries[j + 1].Key, c.Key.ToArray());
                }
                else
                {
                    Assert.False(c.Valid);
                }
                c.SeekForPrev(after);
                Assert.Equal(entries[j].Key, c.Key.ToArray());
            }
            c.Seek(InternalKeys.Create("a"u8, 1, KvEngine.Format.ValueType.Value));
            Assert.Equal(entries[0].Key, c.Key.ToArray());
            c.SeekForPrev(InternalKeys.Create("a"u8, 1, KvEngine.Format.ValueType.Value));
            Assert.False(c.Valid);
            c.SeekForPrev(InternalKeys.Create("z"u8, 1, KvEngine.Format.ValueType.Value));
            Assert.Equal(entries[^1].Key, c.Key.ToArray());
        }
        finally
        {
            c.Dispose();
        }
    }

    [Theory]
    [InlineData(1)]
    [InlineData(3)]
    [InlineData(16)]
    public void SeeksLandWhereAModelSaysAmongKeysThatArePrefixesOfEachOther(int restartInterval)
    {
        // Short alphabets make long shared prefixes, user keys that are prefixes of others and
        // several versions per user key; Prev and Next after each seek check the restart index the
        // seek's scan sets once, at the entry it stops on.
        var random = new Random(restartInterval);
        var users = new SortedSet<byte[]>(Comparer<byte[]>.Create((a, b) => a.AsSpan().SequenceCompareTo(b)));
        while (users.Count < 300)
        {
            byte[] u = new byte[random.Next(0, 7)];
            for (int i = 0; i < u.Length; i++)
            {
                u[i] = (byte)('a' + random.Next(3));
            }
            users.Add(u);
        }
        var entries = new List<(byte[] Key, byte[] Value)>();
        foreach (byte[] u in users)
        {
            int versions = random.Next(1, 4);
            for (int v = 0; v < versions; v++)
            {
                entries.Add((InternalKeys.Create(u, (ulong)(1000 - (v * 10)), KvEngine.Format.ValueType.Value), [(byte)v]));
            }
        }
        Block block = BuildBlock(entries, restartInterval, out _);
        var c = new BlockCursor(block, BlockKeyFormat.InternalKey);
        try
        {
            for (int trial = 0; trial < 3000; trial++)
            {
                byte[] user = new byte[random.Next(0, 8)];
                for (int i = 0; i < user.Length; i++)
                {
                    user[i] = (byte)('a' + random.Next(4) - (random.Next(8) == 0 ? 1 : 0));
                }
                byte[] target = InternalKeys.Create(user, (ulong)random.Next(985, 1005), KvEngine.Format.ValueType.Value);
                int expected = entries.FindIndex(e => InternalKeyComparer.Compare(e.Key, target) >= 0);
                c.Seek(target);
                if (expected < 0)
                {
                    Assert.False(c.Valid);
                    continue;
                }
                Assert.True(c.Valid);
                Assert.Equal(entries[expected].Key, c.Key.ToArray());
                // The restart bookkeeping the scan defers must be right for both directions.
                if (trial % 2 == 0)
                {
                    c.Prev();
                    if (expected == 0)
                    {
                        Assert.False(c.Valid);
                    }
                    else
                    {
                        Assert.Equal(entries[expected - 1].Key, c.Key.ToArray());
                    }
                }
                else
                {
                    c.Next();
                    if (expected + 1 == entries.Count)
                    {
                        Assert.False(c.Valid);
                    }
                    else
                    {
                        Assert.Equal(entries[expected + 1].Key, c.Key.ToArray());
                    }
                }
            }
        }
        finally
        {
            c.Dispose();
        }
    }

    [Fact]
    public void ARestartArrayPastThePooledLimitSpillsAndTheBuilderIsReusableAfter()
    {
        // 20,000 restarts are 80 KB of offsets: more than a pooled array holds, so they spill to
        // native memory; the block must read back the same, and a Reset builder start clean.
        using var builder = new BlockBuilder(1);
        const int n = 20_000;
        for (int i = 0; i < n; i++)
        {
            builder.Add(Encoding.ASCII.GetBytes($"key{i:D6}"), Encoding.ASCII.GetBytes($"v{i}"));
        }
        byte[] big = builder.Finish().ToArray();
        Assert.Equal(big.Length, builder.CurrentSizeEstimate);
        using (var block = new Block(big, big.Length, pooled: false, isDataBlock: false, "big"))
        {
            Assert.Equal(n, block.NumRestarts);
            var c = new BlockCursor(block, BlockKeyFormat.Bytewise);
            try
            {
                for (int i = 0; i < n; i += 997)
                {
                    c.Seek(Encoding.ASCII.GetBytes($"key{i:D6}"));
                    Assert.Equal($"v{i}", Encoding.ASCII.GetString(c.Value));
                }
                int count = 0;
                for (c.SeekToFirst(); c.Valid; c.Next())
                {
                    count++;
                }
                Assert.Equal(n, count);
            }
            finally
            {
                c.Dispose();
            }
        }

        builder.Reset();
        builder.Add("a"u8, "1"u8);
        builder.Add("b"u8, "2"u8);
        byte[] small = builder.Finish().ToArray();
        using var again = new Block(small, small.Length, pooled: false, isDataBlock: false, "small");
        Assert.Equal(2, again.NumRestarts);
        Assert.Equal(0, again.RestartPoint(0));
        var d = new BlockCursor(again, BlockKeyFormat.Bytewise);
        try
        {
            d.Seek("b"u8);
            Assert.Equal("2", Encoding.ASCII.GetString(d.Value));
        }
        finally
        {
            d.Dispose();
        }
    }

    [Fact]
    public void PrefixCompressionStoresSharedBytesOnce()
    {
        var entries = Entries(100);
        BuildBlock(entries, 16, out byte[] compressed);
        BuildBlock(entries, 1, out byte[] flat);
        Assert.True(compressed.Length < flat.Length * 3 / 4, $"{compressed.Length} vs {flat.Length}");
    }

    [Fact]
    public void EmptyBlockHasOneRestartAndNoEntries()
    {
        using var builder = new BlockBuilder(16);
        byte[] bytes = builder.Finish().ToArray();
        Assert.Equal(8, bytes.Length);
        var c = new BlockCursor(new Block(bytes, bytes.Length, false, true, "t"), BlockKeyFormat.Bytewise);
        c.SeekToFirst();
        Assert.False(c.Valid);
        c.SeekToLast();
        Assert.False(c.Valid);
        c.Dispose();
    }

    [Fact]
    public void IndexValuesRoundTripWithDeltaEncoding()
    {
        using var builder = new BlockBuilder(4, valueDeltaEncoding: true);
        var handles = new List<BlockHandle>();
        ulong offset = 0;
        var rng = new Random(5);
        BlockHandle? prev = null;
        Span<byte> full = stackalloc byte[20];
        Span<byte> delta = stackalloc byte[10];
        for (int i = 0; i < 50; i++)
        {
            var h = new BlockHandle(offset, (ulong)rng.Next(1, 9000));
            handles.Add(h);
            offset += h.Size + TableFormat.BlockTrailerSize;
            int fn = h.EncodeTo(full);
            int dn = 0;
            if (prev is BlockHandle p)
            {
                long d = (long)h.Size - (long)p.Size;
                dn = Coding.EncodeVarint64(delta, (ulong)((d << 1) ^ (d >> 63)));
            }
            prev = h;
            builder.Add(Encoding.ASCII.GetBytes($"k{i:D4}"), full[..fn], delta[..dn]);
        }
        byte[] bytes = builder.Finish().ToArray();
        var c = new BlockCursor(new Block(bytes, bytes.Length, false, false, "t"), BlockKeyFormat.Bytewise, IndexValueFormat.DeltaHandle);
        int j = 0;
        for (c.SeekToFirst(); c.Valid; c.Next(), j++)
        {
            Assert.Equal(handles[j], c.Handle);
        }
        Assert.Equal(50, j);
        j = 49;
        for (c.SeekToLast(); c.Valid; c.Prev(), j--)
        {
            Assert.Equal(handles[j], c.Handle);
        }
        c.Seek("k0037"u8);
        Assert.Equal(handles[37], c.Handle);
        c.Dispose();
    }

    [Fact]
    public void EveryByteFlipGivesCorruptionOrAWellFormedScan()
    {
        var entries = Entries(60);
        BuildBlock(entries, 4, out byte[] good);
        for (int i = 0; i < good.Length; i++)
        {
            foreach (byte mask in new byte[] { 0x01, 0x80, 0xFF })
            {
                byte[] bad = (byte[])good.Clone();
                bad[i] ^= mask;
                try
                {
                    var block = new Block(bad, bad.Length, false, true, "t");
                    var c = new BlockCursor(block, BlockKeyFormat.InternalKey);
                    int steps = 0;
                    for (c.SeekToFirst(); c.Valid && steps < 1000; c.Next())
                    {
                        steps++;
                    }
                    for (c.SeekToLast(); c.Valid && steps < 2000; c.Prev())
                    {
                        steps++;
                    }
                    c.Seek(entries[30].Key);
                    c.SeekForPrev(entries[30].Key);
                    c.Dispose();
                    Assert.True(steps < 2000);
                }
                catch (KvCorruptionException)
                {
                }
            }
        }
    }

    [Fact]
    public void NativeBlocksWithAnyByteFlippedSeekOrReportCorruption()
    {
        // A native block (as the cache holds it) takes the prefetching seek path, which reads the
        // restart array raw: every flipped byte must still end in a seek or in corruption.
        var entries = Entries(20);
        BuildBlock(entries, 4, out byte[] good);
        using var allocator = new NativeAllocator(new NativeAllocatorOptions { DebugChecks = true });
        for (int i = 0; i < good.Length; i++)
        {
            foreach (byte mask in new byte[] { 0x01, 0x80, 0xFF })
            {
                NativeBuffer buffer = allocator.Allocate(good.Length);
                good.CopyTo(buffer.Span);
                buffer.Span[i] ^= mask;
                Block block;
                try
                {
                    block = Block.RentNative(buffer, CacheEntryRole.Data, "t", "data", 0);
                }
                catch (KvCorruptionException)
                {
                    continue; // RentNative freed the buffer
                }
                var c = new BlockCursor(block, BlockKeyFormat.InternalKey);
                try
                {
                    foreach (int k in new[] { 0, 7, 13, 19 })
                    {
                        c.Seek(entries[k].Key);
                    }
                    c.Seek(InternalKeys.Create("zzz"u8, 1, KvEngine.Format.ValueType.Value));
                }
                catch (KvCorruptionException)
                {
                }
                finally
                {
                    c.Dispose();
                    block.Dispose();
                }
            }
        }
    }

    [Fact]
    public void TruncatedBlocksAreCorrupt()
    {
        Assert.Throws<KvCorruptionException>(() => new Block(new byte[3], 3, false, true, "t"));
        byte[] tooManyRestarts = new byte[8];
        Coding.EncodeFixed32(tooManyRestarts.AsSpan(4), 5);
        Assert.Throws<KvCorruptionException>(() => new Block(tooManyRestarts, 8, false, false, "t"));
        byte[] noRestarts = new byte[8];
        Assert.Throws<KvCorruptionException>(() => new Block(noRestarts, 8, false, false, "t"));
    }
}
