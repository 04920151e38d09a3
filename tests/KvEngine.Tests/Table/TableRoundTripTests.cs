using System.Text;
using KvEngine.Compression;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Table;
using KvEngine.Util;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Table;

public class TableRoundTripTests
{
    public static TheoryData<byte, byte> CodecsAndChecksums()
    {
        var data = new TheoryData<byte, byte>();
        foreach (CompressionType c in new[] { CompressionType.None, CompressionType.Lz4, CompressionType.Lz4HC, CompressionType.Zstd })
        {
            foreach (ChecksumType k in Enum.GetValues<ChecksumType>())
            {
                data.Add((byte)c, (byte)k);
            }
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(CodecsAndChecksums))]
    public void EveryEntryComesBackThroughScansAndGets(byte codec, byte checksum)
    {
        var options = new TableOptions { Compression = (CompressionType)codec, Checksum = (ChecksumType)checksum };
        List<Entry> entries = TableTestUtil.MakeEntries(1500, seed: codec * 10 + checksum);
        byte[] table = TableTestUtil.Build(options, entries);
        using TableReader reader = TableTestUtil.Open(table, options);

        Assert.Equal((ulong)entries.Count, reader.Properties.NumEntries);
        Assert.True(reader.Properties.NumDataBlocks > 10);
        Assert.Equal(5u, reader.Footer.FormatVersion);
        Assert.Equal((ChecksumType)checksum, reader.Footer.ChecksumType);
        Assert.Equal(CompressionTypeNames.ToRocksDbName((CompressionType)codec), reader.Properties.CompressionName);
        using (InternalIterator it = reader.NewIterator(verifyChecksums: true))
        {
            TableTestUtil.AssertSame(entries, TableTestUtil.ScanForward(it));
            TableTestUtil.AssertSame(entries, TableTestUtil.ScanBackward(it));
        }
        AssertGets(reader, entries);
    }

    internal static void AssertGets(TableReader reader, List<Entry> entries)
    {
        using var value = new ByteBuffer();
        for (int i = 0; i < entries.Count; i++)
        {
            Entry e = entries[i];
            byte[] user = InternalKeys.UserKey(e.Key).ToArray();
            ulong seq = InternalKeys.Sequence(e.Key);
            value.Clear();
            Assert.True(reader.TryGet(user, seq, value, out ValueType type, verifyChecksums: true), e.Describe());
            Assert.Equal(InternalKeys.Type(e.Key), type);
            // Only a Value is appended: for a Merge the caller collects the operands (MergeLookup).
            byte[] expected = type is ValueType.Value ? e.Value : [];
            Assert.Equal(expected, value.WrittenSpan.ToArray());

            // With a snapshot below every version of this key the lookup finds nothing.
            bool olderExists = i + 1 < entries.Count && InternalKeys.UserKey(entries[i + 1].Key).SequenceEqual(user);
            if (!olderExists)
            {
                value.Clear();
                Assert.False(reader.TryGet(user, seq - 1, value, out _, true));
                Assert.Equal(0, value.Length);
            }
        }
        value.Clear();
        Assert.False(reader.TryGet("key0000001"u8, InternalKeys.MaxSequenceNumber, value, out _, true));
        Assert.False(reader.TryGet("zzz"u8, InternalKeys.MaxSequenceNumber, value, out _, true));
        Assert.False(reader.TryGet(""u8, InternalKeys.MaxSequenceNumber, value, out _, true));
    }

    [Fact]
    public void SeeksAgreeWithASortedModel()
    {
        var options = new TableOptions { BlockSize = 512, Compression = CompressionType.Lz4 };
        List<Entry> entries = TableTestUtil.MakeEntries(800, seed: 3);
        byte[] table = TableTestUtil.Build(options, entries);
        using TableReader reader = TableTestUtil.Open(table, options);
        using InternalIterator it = reader.NewIterator(false);
        var rng = new Random(11);
        for (int n = 0; n < 2000; n++)
        {
            byte[] target = rng.Next(3) switch
            {
                0 => entries[rng.Next(entries.Count)].Key,
                1 => InternalKeys.Create(Encoding.ASCII.GetBytes($"key{rng.Next(6000):D7}"), (ulong)rng.Next(2_000_000), ValueType.ValueTypeForSeek),
                _ => InternalKeys.Create(Encoding.ASCII.GetBytes($"k{rng.Next(100)}"), 5, ValueType.Value),
            };
            int lower = LowerBound(entries, target);
            it.Seek(target);
            if (lower < entries.Count)
            {
                Assert.True(it.Valid);
                Assert.Equal(entries[lower].Key, it.Key.ToArray());
                it.Prev();
                Assert.Equal(lower > 0, it.Valid);
                if (lower > 0)
                {
                    Assert.Equal(entries[lower - 1].Key, it.Key.ToArray());
                    it.Next();
                    Assert.Equal(entries[lower].Key, it.Key.ToArray());
                }
            }
            else
            {
                Assert.False(it.Valid);
            }

            int upper = lower < entries.Count && InternalKeyComparer.Compare(entries[lower].Key, target) == 0 ? lower : lower - 1;
            it.SeekForPrev(target);
            if (upper >= 0)
            {
                Assert.True(it.Valid);
                Assert.Equal(entries[upper].Key, it.Key.ToArray());
                it.Next();
                Assert.Equal(upper + 1 < entries.Count, it.Valid);
            }
            else
            {
                Assert.False(it.Valid);
            }
        }
    }

    private static int LowerBound(List<Entry> entries, byte[] target)
    {
        int lo = 0, hi = entries.Count;
        while (lo < hi)
        {
            int mid = (lo + hi) / 2;
            if (InternalKeyComparer.Compare(entries[mid].Key, target) < 0)
            {
                lo = mid + 1;
            }
            else
            {
                hi = mid;
            }
        }
        return lo;
    }

    [Fact]
    public void BigValuesSpanningBlocksAndUserKeysAcrossBlockBoundaries()
    {
        var options = new TableOptions { BlockSize = 1024, Compression = CompressionType.Zstd };
        var entries = new List<Entry>();
        var rng = new Random(2);
        for (int i = 0; i < 40; i++)
        {
            // Five versions of each key, each 3000 bytes: every version is its own block, so user
            // keys span block boundaries and the index must keep sequence numbers.
            for (int v = 0; v < 5; v++)
            {
                var value = new byte[3000 + rng.Next(5000)];
                rng.NextBytes(value.AsSpan(0, value.Length / 2));
                entries.Add(new Entry(TableTestUtil.Key($"big{i:D3}", (ulong)(1000 - v)), value));
            }
        }
        byte[] table = TableTestUtil.Build(options, entries);
        using TableReader reader = TableTestUtil.Open(table, options);
        Assert.Equal(0UL, reader.Properties.IndexKeyIsUserKey);
        Assert.Equal(1UL, reader.Properties.IndexValueIsDeltaEncoded);
        using (InternalIterator it = reader.NewIterator(true))
        {
            TableTestUtil.AssertSame(entries, TableTestUtil.ScanForward(it));
            TableTestUtil.AssertSame(entries, TableTestUtil.ScanBackward(it));
        }
        AssertGets(reader, entries);
        using var value2 = new ByteBuffer();
        Assert.True(reader.TryGet("big007"u8, 997, value2, out _, true));
        Assert.Equal(entries[(7 * 5) + 3].Value, value2.WrittenSpan.ToArray());
    }

    [Fact]
    public void IndexUsesUserKeysWhenNoUserKeySpansABlockBoundary()
    {
        var options = new TableOptions { BlockSize = 256 };
        List<Entry> entries = TableTestUtil.MakeEntries(300, seed: 9, maxValue: 20)
            .GroupBy(e => Convert.ToHexString(InternalKeys.UserKey(e.Key))).Select(g => g.First()).ToList();
        byte[] table = TableTestUtil.Build(options, entries);
        using TableReader reader = TableTestUtil.Open(table, options);
        Assert.Equal(1UL, reader.Properties.IndexKeyIsUserKey);
        using InternalIterator it = reader.NewIterator(true);
        TableTestUtil.AssertSame(entries, TableTestUtil.ScanForward(it));
        AssertGets(reader, entries);
    }

    [Theory]
    [InlineData(1, 0)]
    [InlineData(16, 0)]
    [InlineData(16, 1)]
    [InlineData(4, 2)]
    public void IndexRestartIntervalsAndShorteningModes(int indexRestartInterval, int shortening)
    {
        var options = new TableOptions
        {
            BlockSize = 300,
            IndexBlockRestartInterval = indexRestartInterval,
            IndexShortening = (IndexShortening)shortening,
        };
        List<Entry> entries = TableTestUtil.MakeEntries(700, seed: indexRestartInterval + shortening);
        byte[] table = TableTestUtil.Build(options, entries);
        using TableReader reader = TableTestUtil.Open(table, options);
        using InternalIterator it = reader.NewIterator(true);
        TableTestUtil.AssertSame(entries, TableTestUtil.ScanForward(it));
        TableTestUtil.AssertSame(entries, TableTestUtil.ScanBackward(it));
        AssertGets(reader, entries);
    }

    [Fact]
    public void EmptyTableHasNoEntries()
    {
        var options = new TableOptions();
        byte[] table = TableTestUtil.Build(options, []);
        using TableReader reader = TableTestUtil.Open(table, options);
        using InternalIterator it = reader.NewIterator(true);
        it.SeekToFirst();
        Assert.False(it.Valid);
        it.SeekToLast();
        Assert.False(it.Valid);
        using var v = new ByteBuffer();
        Assert.False(reader.TryGet("a"u8, 100, v, out _, true));
        Assert.Equal(0UL, reader.Properties.NumEntries);
    }

    [Fact]
    public void BuilderRejectsOutOfOrderAndMalformedKeys()
    {
        using var file = new MemoryWritableFile();
        using var builder = new TableBuilder(new TableOptions(), file);
        builder.Add(TableTestUtil.Key("b", 5), [1]);
        Assert.Throws<ArgumentException>(() => builder.Add(TableTestUtil.Key("b", 5), [1]));
        Assert.Throws<ArgumentException>(() => builder.Add(TableTestUtil.Key("b", 6), [1]));
        Assert.Throws<ArgumentException>(() => builder.Add(TableTestUtil.Key("a", 1), [1]));
        Assert.Throws<ArgumentException>(() => builder.Add([1, 2, 3], [1]));
        Assert.Throws<ArgumentException>(() => builder.Add(TableTestUtil.Key("c", 1, ValueType.RangeDeletion), [1]));
        builder.Add(TableTestUtil.Key("b", 4), [2]);
        Assert.Equal(2, builder.NumEntries);
        Assert.Equal(TableTestUtil.Key("b", 5), builder.SmallestKey.ToArray());
        Assert.Equal(TableTestUtil.Key("b", 4), builder.LargestKey.ToArray());
        builder.Abandon();
        Assert.Throws<InvalidOperationException>(() => builder.Add(TableTestUtil.Key("c", 1), [1]));
    }

    [Fact]
    public void OptionsAreValidated()
    {
        using var file = new MemoryWritableFile();
        Assert.Throws<ArgumentException>(() => new TableBuilder(new TableOptions { FormatVersion = 4 }, file));
        Assert.Throws<ArgumentException>(() => new TableBuilder(new TableOptions { Compression = CompressionType.Zlib }, file));
        Assert.ThrowsAny<ArgumentException>(() => new TableBuilder(new TableOptions { BlockRestartInterval = 0 }, file));
        Assert.ThrowsAny<ArgumentException>(() => new TableBuilder(new TableOptions { BlockSizeDeviation = 101 }, file));
    }
}
