using System.Text;
using KvEngine.Filters;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Table;
using KvEngine.Util;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Table;

/// <summary>
/// RocksDB's data-block hash index (kDataBlockBinaryAndHash): the bytes a block carries (bucket
/// math, collisions, the 253-restart and 64 KiB limits) and point lookups through it, which must
/// answer exactly what the binary search answers, present or absent, at any snapshot.
/// </summary>
public class DataBlockHashIndexTests
{
    private static byte[] User(int i) => Encoding.ASCII.GetBytes($"user{i:D6}");

    private static byte[] Ikey(byte[] user, ulong seq = 100, ValueType type = ValueType.Value) => InternalKeys.Create(user, seq, type);

    private static byte[] BuildBlock(IReadOnlyList<byte[]> keys, int restartInterval, double ratio = 0.75, int valueLength = 8)
    {
        using var builder = new BlockBuilder(restartInterval, hashUtilRatio: ratio);
        byte[] value = new byte[valueLength];
        foreach (byte[] k in keys)
        {
            builder.Add(k, value);
        }
        byte[] bytes = builder.Finish().ToArray();
        Assert.Equal(bytes.Length, builder.CurrentSizeEstimate);
        return bytes;
    }

    private static uint Footer(byte[] block) => Coding.DecodeFixed32(block.AsSpan(block.Length - 4));

    [Fact]
    public void ABlockCarriesRocksDbsBucketArray()
    {
        // 40 keys, a restart every 4: 10 intervals; (ushort)(40 / 0.75) | 1 = 53 buckets.
        var keys = Enumerable.Range(0, 40).Select(i => Ikey(User(i))).ToList();
        byte[] bytes = BuildBlock(keys, restartInterval: 4);
        uint footer = Footer(bytes);
        Assert.Equal(DataBlockHashIndex.FooterFlag | 10u, footer);
        int buckets = bytes[^6] | (bytes[^5] << 8);
        Assert.Equal(53, buckets);
        int bucketsOffset = bytes.Length - 6 - buckets;
        // The bytes before the bucket array are the 10 restart offsets.
        Assert.Equal(bytes.Length - 6 - buckets - 40, new Block(bytes, bytes.Length, false, true, "t").RestartsOffset);

        // Every bucket, recomputed from RocksDB's rule: the one interval hashing there, 254 for
        // two or more, 255 for none.
        var expected = new byte[buckets];
        Array.Fill(expected, DataBlockHashIndex.NoEntry);
        for (int i = 0; i < keys.Count; i++)
        {
            int b = (int)(LegacyBloomHash.Hash(User(i), 397) % (uint)buckets);
            byte restart = (byte)(i / 4);
            expected[b] = expected[b] == DataBlockHashIndex.NoEntry ? restart : expected[b] == restart ? restart : DataBlockHashIndex.Collision;
        }
        Assert.Equal(expected, bytes.AsSpan(bucketsOffset, buckets).ToArray());
        Assert.Contains(DataBlockHashIndex.NoEntry, expected);
    }

    [Theory]
    [InlineData(1, 0.75, 1)] // one key: (ushort)1.33 = 1
    [InlineData(3, 0.75, 5)] // 4 -> 5 (odd)
    [InlineData(16, 0.75, 21)]
    [InlineData(16, 1.0, 17)]
    [InlineData(16, 0.5, 33)]
    [InlineData(2, 4.0, 1)] // 0.5 buckets -> at least 1
    public void TheBucketCountIsRocksDbs(int keys, double ratio, int expected)
    {
        byte[] bytes = BuildBlock(Enumerable.Range(0, keys).Select(i => Ikey(User(i))).ToList(), restartInterval: 16, ratio);
        Assert.Equal(expected, bytes[^6] | (bytes[^5] << 8));
    }

    [Fact]
    public void VersionsOfOneKeyAcrossIntervalsMarkACollision()
    {
        // key 5 has versions in intervals 1 and 2 (restart every 4: entries 4..7 and 8..11).
        var keys = new List<byte[]>();
        for (int i = 0; i < 5; i++)
        {
            keys.Add(Ikey(User(i)));
        }
        for (ulong s = 10; s > 4; s--)
        {
            keys.Add(Ikey(User(5), s)); // entries 5..10
        }
        keys.Add(Ikey(User(6)));
        byte[] bytes = BuildBlock(keys, restartInterval: 4);
        var block = new Block(bytes, bytes.Length, false, true, "t");
        Assert.Equal(DataBlockHashIndex.Collision, block.HashBucket(User(5)));

        // The lookup falls back to the binary search and still finds each snapshot's version.
        var c = new BlockCursor(block, BlockKeyFormat.InternalKey);
        try
        {
            for (ulong snapshot = 10; snapshot > 4; snapshot--)
            {
                c.SeekForGet(InternalKeys.Create(User(5), snapshot, ValueType.ValueTypeForSeek));
                Assert.True(c.Valid);
                Assert.Equal(snapshot, InternalKeys.Sequence(c.Key));
            }
        }
        finally
        {
            c.Dispose();
        }
    }

    [Fact]
    public void KeysOfTwoIntervalsInOneBucketMarkACollisionAndBothAreFound()
    {
        // Find two keys of different intervals whose hashes share a bucket of a 2-key, 2-interval
        // block (3 buckets), deterministically.
        byte[]? a = null;
        byte[]? b = null;
        for (int i = 0; i < 100 && b == null; i++)
        {
            for (int j = i + 1; j < 100; j++)
            {
                if (LegacyBloomHash.Hash(User(i), 397) % 3 == LegacyBloomHash.Hash(User(j), 397) % 3)
                {
                    (a, b) = (User(i), User(j));
                    break;
                }
            }
        }
        Assert.NotNull(b);
        byte[] bytes = BuildBlock([Ikey(a!), Ikey(b!)], restartInterval: 1);
        Assert.Equal(3, bytes[^6] | (bytes[^5] << 8));
        var block = new Block(bytes, bytes.Length, false, true, "t");
        Assert.Equal(DataBlockHashIndex.Collision, block.HashBucket(a!));
        AssertLookupsMatchBinarySearch(block, [Ikey(a!), Ikey(b!)]);
    }

    [Theory]
    [InlineData(254, true)] // restart indices 0..253: the last one a bucket can name
    [InlineData(255, false)]
    [InlineData(600, false)]
    public void BlocksPastRestart253HaveNoIndex(int restarts, bool indexed)
    {
        var keys = Enumerable.Range(0, restarts).Select(i => Ikey(User(i))).ToList();
        byte[] bytes = BuildBlock(keys, restartInterval: 1);
        Assert.Equal(indexed, (Footer(bytes) & DataBlockHashIndex.FooterFlag) != 0);
        Assert.Equal((uint)restarts, Footer(bytes) & ~DataBlockHashIndex.FooterFlag);
        var block = new Block(bytes, bytes.Length, false, true, "t");
        Assert.Equal(indexed, block.HashBucketCount != 0);
        AssertLookupsMatchBinarySearch(block, keys);
    }

    [Fact]
    public void BlocksPast64KiBHaveNoIndex()
    {
        var keys = Enumerable.Range(0, 100).Select(i => Ikey(User(i))).ToList();
        Assert.NotEqual(0u, Footer(BuildBlock(keys, 16, valueLength: 600)) & DataBlockHashIndex.FooterFlag); // 61 KB
        byte[] big = BuildBlock(keys, 16, valueLength: 700); // 71 KB
        Assert.True(big.Length > DataBlockHashIndex.MaxBlockSize);
        Assert.Equal(0u, Footer(big) & DataBlockHashIndex.FooterFlag);
        AssertLookupsMatchBinarySearch(new Block(big, big.Length, false, true, "t"), keys);
    }

    [Fact]
    public void AbsentKeysAreNotFoundWhateverTheirBucket()
    {
        // Even keys present, odd ones absent (buckets empty, or naming another key's interval),
        // plus keys before and after every entry.
        var keys = Enumerable.Range(0, 120).Where(i => i % 2 == 0).Select(i => Ikey(User(i))).ToList();
        byte[] bytes = BuildBlock(keys, restartInterval: 8);
        var block = new Block(bytes, bytes.Length, false, true, "t");
        int noEntry = 0;
        int falsePositive = 0;
        var c = new BlockCursor(block, BlockKeyFormat.InternalKey);
        try
        {
            for (int i = -1; i <= 121; i++)
            {
                byte[] user = i < 0 ? "a"u8.ToArray() : i > 120 ? "zz"u8.ToArray() : User(i);
                bool present = i is >= 0 and < 120 && i % 2 == 0;
                byte bucket = block.HashBucket(user);
                if (!present)
                {
                    noEntry += bucket == DataBlockHashIndex.NoEntry ? 1 : 0;
                    falsePositive += bucket < DataBlockHashIndex.Collision ? 1 : 0;
                }
                c.SeekForGet(InternalKeys.Create(user, InternalKeys.MaxSequenceNumber, ValueType.ValueTypeForSeek));
                bool found = c.Valid && InternalKeys.UserKey(c.Key).SequenceEqual(user);
                Assert.Equal(present, found);
            }
        }
        finally
        {
            c.Dispose();
        }
        Assert.True(noEntry > 0 && falsePositive > 0, $"{noEntry} empty buckets, {falsePositive} false positives");
    }

    [Fact]
    public void ABucketNamingAMissingRestartIsCorruption()
    {
        var keys = Enumerable.Range(0, 8).Select(i => Ikey(User(i))).ToList();
        byte[] bytes = BuildBlock(keys, restartInterval: 4); // 2 restarts
        int buckets = bytes[^6] | (bytes[^5] << 8);
        int offset = bytes.Length - 6 - buckets;
        int b = (int)(LegacyBloomHash.Hash(User(3), 397) % (uint)buckets);
        bytes[offset + b] = 7;
        var block = new Block(bytes, bytes.Length, false, true, "t.sst");
        var c = new BlockCursor(block, BlockKeyFormat.InternalKey);
        try
        {
            KvCorruptionException e = Assert.Throws<KvCorruptionException>(() => c.SeekForGet(Ikey(User(3), InternalKeys.MaxSequenceNumber, ValueType.ValueTypeForSeek)));
            Assert.Contains("hash index names restart 7 of 2", e.Message, StringComparison.Ordinal);
        }
        finally
        {
            c.Dispose();
        }
    }

    [Theory]
    [InlineData(0)]
    [InlineData(60000)]
    public void ABucketCountTheBlockCannotHoldIsCorruption(int buckets)
    {
        byte[] bytes = BuildBlock(Enumerable.Range(0, 8).Select(i => Ikey(User(i))).ToList(), restartInterval: 4);
        bytes[^6] = (byte)buckets;
        bytes[^5] = (byte)(buckets >> 8);
        KvCorruptionException e = Assert.Throws<KvCorruptionException>(() => new Block(bytes, bytes.Length, false, true, "t.sst"));
        Assert.Contains("hash index", e.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(16, 4096, 0.75)]
    [InlineData(4, 1024, 0.75)]
    [InlineData(1, 512, 2.0)]
    [InlineData(16, 16384, 0.25)]
    public void TableGetsMatchTheBinarySearchAtEverySnapshot(int restartInterval, int blockSize, double ratio)
    {
        // The same entries (several versions of some keys, deletions, merges) in a table with and
        // one without the index: every Get, present, absent or under an older snapshot, answers alike.
        List<Entry> entries = TableTestUtil.MakeEntries(3000, seed: restartInterval * 7 + blockSize);
        var plain = new TableOptions { BlockRestartInterval = restartInterval, BlockSize = blockSize };
        var hashed = plain with { DataBlockIndexType = KvDataBlockIndexType.BinaryAndHash, DataBlockHashTableUtilRatio = ratio };
        byte[] withHash = TableTestUtil.Build(hashed, entries);
        byte[] without = TableTestUtil.Build(plain, entries);
        Assert.True(withHash.Length > without.Length);
        using TableReader a = TableTestUtil.Open(withHash, hashed);
        using TableReader b = TableTestUtil.Open(without, plain);
        TableRoundTripTests.AssertGets(a, entries);

        using var va = new ByteBuffer();
        using var vb = new ByteBuffer();
        var rng = new Random(restartInterval);
        for (int i = 0; i < 20000; i++)
        {
            byte[] user = Encoding.ASCII.GetBytes($"key{rng.Next(3000 * 7 + 10):D7}"); // a seventh present
            ulong snapshot = rng.Next(4) == 0 ? (ulong)rng.Next(990_000, 1_000_001) : InternalKeys.MaxSequenceNumber;
            va.Clear();
            vb.Clear();
            bool fa = a.TryGet(user, snapshot, va, out ValueType ta, verifyChecksums: true);
            bool fb = b.TryGet(user, snapshot, vb, out ValueType tb, verifyChecksums: true);
            Assert.Equal(fb, fa);
            Assert.Equal(tb, ta);
            Assert.Equal(vb.WrittenSpan.ToArray(), va.WrittenSpan.ToArray());
        }

        // Iterators ignore the index: the same entries in the same order.
        using InternalIterator it = a.NewIterator(verifyChecksums: true);
        TableTestUtil.AssertSame(entries, TableTestUtil.ScanForward(it));
    }

    /// <summary>SeekForGet and Seek agree on every key of <paramref name="keys"/> and on absent keys around them.</summary>
    private static void AssertLookupsMatchBinarySearch(Block block, IReadOnlyList<byte[]> keys)
    {
        var hashed = new BlockCursor(block, BlockKeyFormat.InternalKey);
        var binary = new BlockCursor(block, BlockKeyFormat.InternalKey);
        try
        {
            foreach (byte[] k in keys)
            {
                byte[] user = InternalKeys.UserKey(k).ToArray();
                foreach (byte[] probe in new[] { user, [.. user, 0], user[..^1] })
                {
                    byte[] target = InternalKeys.Create(probe, InternalKeys.MaxSequenceNumber, ValueType.ValueTypeForSeek);
                    hashed.SeekForGet(target);
                    binary.Seek(target);
                    bool hashFound = hashed.Valid && InternalKeys.UserKey(hashed.Key).SequenceEqual(probe);
                    bool binaryFound = binary.Valid && InternalKeys.UserKey(binary.Key).SequenceEqual(probe);
                    Assert.Equal(binaryFound, hashFound);
                    if (hashFound)
                    {
                        Assert.Equal(binary.Key.ToArray(), hashed.Key.ToArray());
                        Assert.Equal(binary.Value.ToArray(), hashed.Value.ToArray());
                    }
                }
            }
        }
        finally
        {
            hashed.Dispose();
            binary.Dispose();
        }
    }
}
