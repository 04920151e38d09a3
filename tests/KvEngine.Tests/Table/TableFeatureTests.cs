using System.Text;
using KvEngine.Compression;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Table;
using KvEngine.Util;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Table;

public class TableFeatureTests
{
    [Fact]
    public void PropertiesRoundTripWithRocksDbNamesAndEncodings()
    {
        var options = new TableOptions { Compression = CompressionType.Zstd, CompressionLevel = 5, FilterPolicy = new ExactFilterPolicy(), BlockSize = 1024 };
        List<Entry> entries = TableTestUtil.MakeEntries(500, seed: 1);
        byte[] table;
        TableProperties written;
        using (var file = new MemoryWritableFile())
        {
            var context = new TableBuildContext
            {
                ColumnFamilyId = 3, ColumnFamilyName = "cf3", CreationTime = 11, OldestKeyTime = 12, FileCreationTime = 13,
                OriginalFileNumber = 77, DbId = "db-id", DbSessionId = "SESSION", DbHostId = "host",
            };
            using var builder = new TableBuilder(options, file, context);
            foreach (Entry e in entries)
            {
                builder.Add(e.Key, e.Value);
            }
            builder.AddRangeTombstone(TableTestUtil.Key("a", 9, ValueType.RangeDeletion), "b"u8);
            builder.Finish();
            written = builder.Properties;
            table = file.ToArray();
        }
        using TableReader reader = TableTestUtil.Open(table, options);
        TableProperties p = reader.Properties;
        Assert.Equal((ulong)entries.Count + 1, p.NumEntries);
        Assert.Equal(1UL, p.NumRangeDeletions);
        Assert.Equal((ulong)entries.Count(e => InternalKeys.Type(e.Key) is ValueType.Deletion or ValueType.SingleDeletion) + 1, p.NumDeletions);
        Assert.Equal((ulong)entries.Count(e => InternalKeys.Type(e.Key) == ValueType.Merge), p.NumMergeOperands);
        Assert.Equal((ulong)entries.Sum(e => e.Key.Length) + 9, p.RawKeySize);
        Assert.Equal((ulong)entries.Sum(e => e.Value.Length) + 1, p.RawValueSize);
        Assert.Equal(written.DataSize, p.DataSize);
        Assert.Equal(written.NumDataBlocks, p.NumDataBlocks);
        Assert.True(p.NumDataBlocks > 5);
        Assert.True(p.FilterSize > 0);
        Assert.Equal((ulong)entries.Select(e => Convert.ToHexString(InternalKeys.UserKey(e.Key))).Distinct().Count(), p.NumFilterEntries);
        Assert.True(p.IndexSize > TableFormat.BlockTrailerSize);
        Assert.Equal(1UL, p.IndexValueIsDeltaEncoded);
        Assert.Equal(0UL, p.FormatVersion);
        Assert.Equal(3UL, p.ColumnFamilyId);
        Assert.Equal("cf3", p.ColumnFamilyName);
        Assert.Equal((11UL, 12UL, 13UL, 77UL), (p.CreationTime, p.OldestKeyTime, p.FileCreationTime, p.OriginalFileNumber));
        Assert.Equal(("db-id", "SESSION", "host"), (p.DbId, p.DbSessionId, p.DbHostId));
        Assert.Equal("test.ExactFilter", p.FilterPolicyName);
        Assert.Equal("leveldb.BytewiseComparator", p.ComparatorName);
        Assert.Equal(("nullptr", "nullptr", "[]"), (p.MergeOperatorName, p.PrefixExtractorName, p.PropertyCollectorsNames));
        Assert.Equal("ZSTD", p.CompressionName);
        Assert.Contains("level=5;", p.CompressionOptions, StringComparison.Ordinal);
        Assert.Equal(IndexType.BinarySearch, p.IndexType);
        Assert.True(p.WholeKeyFiltering);
        Assert.False(p.PrefixFiltering);
        Assert.Equal([0, 0, 0, 0], p.UserCollected[TablePropertyNames.IndexType]);
        Assert.Equal("1"u8.ToArray(), p.UserCollected[TablePropertyNames.WholeKeyFiltering]);
        // data.size ends where the first meta block (the filter) starts.
        Assert.Equal(reader.Properties.DataSize, FirstMetaOffset(table));
    }

    private static ulong FirstMetaOffset(byte[] table)
    {
        Footer f = Footer.Decode(table.AsSpan(table.Length - TableFormat.FooterSize), "t");
        var meta = new Block(table.AsSpan((int)f.MetaIndex.Offset, (int)f.MetaIndex.Size).ToArray(), (int)f.MetaIndex.Size, false, false, "t");
        var c = new BlockCursor(meta, BlockKeyFormat.Bytewise);
        ulong min = ulong.MaxValue;
        var names = new List<string>();
        for (c.SeekToFirst(); c.Valid; c.Next())
        {
            ReadOnlySpan<byte> v = c.Value;
            Assert.True(BlockHandle.TryDecode(ref v, out BlockHandle h));
            min = Math.Min(min, h.Offset);
            names.Add(Encoding.UTF8.GetString(c.Key));
        }
        c.Dispose();
        Assert.Equal(["fullfilter.test.ExactFilter", "rocksdb.properties", "rocksdb.range_del"], names);
        return min;
    }

    [Fact]
    public void FilterAnswersAbsentKeysWithoutReadingDataBlocks()
    {
        var policy = new ExactFilterPolicy();
        var options = new TableOptions { FilterPolicy = policy };
        List<Entry> entries = TableTestUtil.MakeEntries(400, seed: 6);
        byte[] table = TableTestUtil.Build(options, entries);
        var file = new MemoryRandomAccessFile(table);
        using TableReader reader = TableReader.Open(file, table.Length, options, "f.sst");
        Assert.True(reader.HasFilter);
        int readsAfterOpen = file.Reads;
        using var value = new ByteBuffer();
        for (int i = 0; i < 100; i++)
        {
            byte[] absent = Encoding.ASCII.GetBytes($"key{(i * 7) + 3:D7}");
            Assert.False(reader.KeyMayMatch(absent));
            Assert.False(reader.TryGet(absent, InternalKeys.MaxSequenceNumber, value, out _, true));
        }
        Assert.Equal(readsAfterOpen, file.Reads);
        Assert.True(policy.Probes >= 200);
        TableRoundTripTests.AssertGets(reader, entries);
        Assert.True(file.Reads > readsAfterOpen);

        // A reader configured without the policy, or with another one, ignores the filter block.
        using TableReader plain = TableTestUtil.Open(table, new TableOptions());
        Assert.False(plain.HasFilter);
        Assert.True(plain.KeyMayMatch("nope"u8));
    }

    [Fact]
    public void WithoutWholeKeyFilteringNoFilterBlockIsWritten()
    {
        var options = new TableOptions { FilterPolicy = new ExactFilterPolicy(), WholeKeyFiltering = false };
        byte[] table = TableTestUtil.Build(options, TableTestUtil.MakeEntries(50, seed: 2));
        using TableReader reader = TableTestUtil.Open(table, options);
        Assert.False(reader.HasFilter);
        Assert.Equal(0UL, reader.Properties.FilterSize);
        Assert.False(reader.Properties.WholeKeyFiltering);
    }

    [Fact]
    public void RangeTombstonesRoundTripInOrder()
    {
        var options = new TableOptions();
        var tombstones = new List<(byte[] Start, byte[] End)>
        {
            (TableTestUtil.Key("a", 20, ValueType.RangeDeletion), "c"u8.ToArray()),
            (TableTestUtil.Key("a", 10, ValueType.RangeDeletion), "b"u8.ToArray()),
            (TableTestUtil.Key("m", 15, ValueType.RangeDeletion), "q"u8.ToArray()),
        };
        byte[] table = TableTestUtil.Build(options, TableTestUtil.MakeEntries(10, seed: 1), b =>
        {
            foreach ((byte[] s, byte[] e) in tombstones)
            {
                b.AddRangeTombstone(s, e);
            }
            Assert.Throws<ArgumentException>(() => b.AddRangeTombstone(TableTestUtil.Key("a", 10, ValueType.RangeDeletion), "b"u8));
        });
        using TableReader reader = TableTestUtil.Open(table, options);
        Assert.NotNull(reader.RangeDelHandle);
        using InternalIterator it = reader.NewRangeTombstoneIterator()!;
        int i = 0;
        for (it.SeekToFirst(); it.Valid; it.Next(), i++)
        {
            Assert.Equal(tombstones[i].Start, it.Key.ToArray());
            Assert.Equal(tombstones[i].End, it.Value.ToArray());
        }
        Assert.Equal(3, i);
        it.Seek(TableTestUtil.Key("b", 100, ValueType.RangeDeletion));
        Assert.Equal(tombstones[2].Start, it.Key.ToArray());

        using var file = new MemoryWritableFile();
        using var builder = new TableBuilder(options, file);
        builder.AddRangeTombstone(TableTestUtil.Key("m", 5, ValueType.RangeDeletion), "n"u8);
        Assert.Throws<ArgumentException>(() => builder.AddRangeTombstone(TableTestUtil.Key("a", 5, ValueType.RangeDeletion), "b"u8));
        Assert.Throws<ArgumentException>(() => builder.AddRangeTombstone(TableTestUtil.Key("z", 5, ValueType.Value), "zz"u8));
    }

    [Fact]
    public void IncompressibleBlocksAreStoredRaw()
    {
        var options = new TableOptions { Compression = CompressionType.Lz4, EnableIndexCompression = false };
        var rng = new Random(3);
        var entries = new List<Entry>();
        for (int i = 0; i < 200; i++)
        {
            var value = new byte[100];
            rng.NextBytes(value);
            entries.Add(new Entry(TableTestUtil.Key($"k{i:D5}", 1), value));
        }
        byte[] table = TableTestUtil.Build(options, entries);
        using TableReader reader = TableTestUtil.Open(table, options);
        using var value2 = new ByteBuffer();
        Assert.True(reader.TryGet("k00000"u8, 1, value2, out _, true));
        Assert.Equal(entries[0].Value, value2.WrittenSpan.ToArray());
        // The first data block's trailer says "no compression".
        BlockLease lease = reader.AcquireIndex(fillCache: true);
        BlockCursor index = reader.NewIndexCursor(lease.Block);
        index.SeekToFirst();
        BlockHandle first = index.Handle;
        index.Dispose();
        lease.Release();
        Assert.Equal((byte)CompressionType.None, table[(int)(first.Offset + first.Size)]);
        Assert.Equal("LZ4", reader.Properties.CompressionName);
    }

    [Fact]
    public void ReadsWithoutChecksumVerificationReturnTheSameData()
    {
        var options = new TableOptions { Compression = CompressionType.Zstd };
        List<Entry> entries = TableTestUtil.MakeEntries(300, seed: 8);
        byte[] table = TableTestUtil.Build(options, entries);
        using TableReader reader = TableTestUtil.Open(table, options);
        using InternalIterator it = reader.NewIterator(verifyChecksums: false);
        TableTestUtil.AssertSame(entries, TableTestUtil.ScanForward(it));
        using var value = new ByteBuffer();
        Entry e = entries[17];
        Assert.True(reader.TryGet(InternalKeys.UserKey(e.Key), InternalKeys.Sequence(e.Key), value, out _, verifyChecksums: false));
    }

    [Fact]
    public void LongUserKeysWork()
    {
        var options = new TableOptions { BlockSize = 2048 };
        var entries = new List<Entry>();
        for (int i = 0; i < 50; i++)
        {
            string user = new string((char)('a' + (i % 26)), 300 + i) + i.ToString("D3", System.Globalization.CultureInfo.InvariantCulture);
            entries.Add(new Entry(TableTestUtil.Key(user, 5), [(byte)i]));
        }
        entries.Sort((a, b) => InternalKeyComparer.Compare(a.Key, b.Key));
        byte[] table = TableTestUtil.Build(options, entries);
        using TableReader reader = TableTestUtil.Open(table, options);
        TableRoundTripTests.AssertGets(reader, entries);
    }
}
