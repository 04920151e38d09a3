using KvEngine.Compression;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Table;
using KvEngine.Util;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Table;

public class TableCorruptionTests
{
    private static readonly ExactFilterPolicy s_filter = new();

    private static TableOptions Options(CompressionType codec, ChecksumType checksum) => new()
    {
        BlockSize = 256,
        Compression = codec,
        Checksum = checksum,
        FilterPolicy = s_filter,
    };

    private static (byte[] Table, List<Entry> Entries) SmallTable(TableOptions options)
    {
        List<Entry> entries = TableTestUtil.MakeEntries(120, seed: 4, maxValue: 60);
        byte[] table = TableTestUtil.Build(options, entries, b =>
            b.AddRangeTombstone(TableTestUtil.Key("key0000050", 3, ValueType.RangeDeletion), "key0000090"u8));
        return (table, entries);
    }

    /// <summary>Everything a reader can observe, as text; throws whatever the reader throws.</summary>
    private static string ReadEverything(byte[] table, TableOptions options, List<Entry> entries)
    {
        var sb = new System.Text.StringBuilder();
        using TableReader reader = TableTestUtil.Open(table, options);
        using (InternalIterator it = reader.NewIterator(verifyChecksums: true))
        {
            foreach (Entry e in TableTestUtil.ScanForward(it))
            {
                sb.Append(e.Describe()).Append('\n');
            }
            foreach (Entry e in TableTestUtil.ScanBackward(it))
            {
                sb.Append(e.Describe()).Append('\n');
            }
        }
        using (InternalIterator? rd = reader.NewRangeTombstoneIterator())
        {
            for (rd?.SeekToFirst(); rd is { Valid: true }; rd.Next())
            {
                sb.Append(Convert.ToHexString(rd.Key)).Append("->").Append(Convert.ToHexString(rd.Value)).Append('\n');
            }
        }
        using var value = new ByteBuffer();
        for (int i = 0; i < entries.Count; i += 7)
        {
            value.Clear();
            bool found = reader.TryGet(InternalKeys.UserKey(entries[i].Key), InternalKeys.Sequence(entries[i].Key), value, out ValueType t, true);
            sb.Append(found).Append(t).Append(Convert.ToHexString(value.WrittenSpan)).Append('\n');
        }
        return sb.ToString();
    }

    public static TheoryData<byte, byte> Cases() => new()
    {
        { (byte)CompressionType.None, (byte)ChecksumType.Xxh3 },
        { (byte)CompressionType.Lz4, (byte)ChecksumType.Crc32C },
        { (byte)CompressionType.Zstd, (byte)ChecksumType.Xxh3 },
        { (byte)CompressionType.None, (byte)ChecksumType.XxHash64 },
    };

    [Theory]
    [MemberData(nameof(Cases))]
    public void EveryBitFlipIsDetectedOrHarmless(byte codec, byte checksum)
    {
        TableOptions options = Options((CompressionType)codec, (ChecksumType)checksum);
        (byte[] table, List<Entry> entries) = SmallTable(options);
        string expected = ReadEverything(table, options, entries);
        int detected = 0;
        for (int i = 0; i < table.Length; i++)
        {
            byte[] bad = (byte[])table.Clone();
            bad[i] ^= (byte)(1 << (i % 8));
            try
            {
                string actual = ReadEverything(bad, options, entries);
                Assert.True(expected == actual, $"flip at byte {i} of {table.Length} changed what the reader returns without an error");
            }
            catch (KvCorruptionException e)
            {
                Assert.Contains("test.sst", e.Message, StringComparison.Ordinal);
                detected++;
            }
        }
        Assert.True(detected > table.Length * 9 / 10, $"only {detected} of {table.Length} flips detected");
    }

    [Fact]
    public void TruncationAnywhereIsCorruption()
    {
        TableOptions options = Options(CompressionType.Lz4, ChecksumType.Xxh3);
        (byte[] table, List<Entry> entries) = SmallTable(options);
        for (int length = 0; length < table.Length; length += Math.Max(1, length / 50))
        {
            byte[] cut = table.AsSpan(0, length).ToArray();
            Assert.Throws<KvCorruptionException>(() => ReadEverything(cut, options, entries));
        }
    }

    [Fact]
    public void ShortReadsFromTheFileAreCorruption()
    {
        TableOptions options = Options(CompressionType.None, ChecksumType.Xxh3);
        (byte[] table, List<Entry> entries) = SmallTable(options);
        // The file claims to be longer than the bytes behind it.
        var e = Assert.Throws<KvCorruptionException>(() =>
        {
            using TableReader r = TableReader.Open(new MemoryRandomAccessFile(table), table.Length + 100, options, "test.sst");
        });
        Assert.Contains("test.sst", e.Message, StringComparison.Ordinal);
        _ = entries;
    }

    [Fact]
    public void HandlesPastTheEndAreCorruption()
    {
        TableOptions options = Options(CompressionType.None, ChecksumType.Xxh3);
        (byte[] table, _) = SmallTable(options);
        Footer footer = Footer.Decode(table.AsSpan(table.Length - TableFormat.FooterSize), "x");
        foreach (Footer bad in new[]
        {
            footer with { Index = new BlockHandle(footer.Index.Offset, (ulong)table.Length) },
            footer with { Index = new BlockHandle(ulong.MaxValue - 2, 10) },
            footer with { MetaIndex = new BlockHandle((ulong)table.Length - 10, 4) },
            footer with { MetaIndex = new BlockHandle(0, ulong.MaxValue) },
        })
        {
            byte[] copy = (byte[])table.Clone();
            bad.EncodeTo(copy.AsSpan(copy.Length - TableFormat.FooterSize));
            var e = Assert.Throws<KvCorruptionException>(() => TableTestUtil.Open(copy, options).Dispose());
            Assert.Contains("test.sst", e.Message, StringComparison.Ordinal);
        }
    }

    [Fact]
    public void BadMagicAndVersionsAreCorruption()
    {
        TableOptions options = Options(CompressionType.None, ChecksumType.Xxh3);
        (byte[] table, _) = SmallTable(options);
        byte[] copy = (byte[])table.Clone();
        copy[^1] ^= 0x10;
        Assert.Contains("magic", Assert.Throws<KvCorruptionException>(() => TableTestUtil.Open(copy, options)).Message, StringComparison.Ordinal);
        copy = (byte[])table.Clone();
        Coding.EncodeFixed32(copy.AsSpan(copy.Length - 12), 6);
        Assert.Contains("format_version", Assert.Throws<KvCorruptionException>(() => TableTestUtil.Open(copy, options)).Message, StringComparison.Ordinal);
        Assert.Throws<KvCorruptionException>(() => TableTestUtil.Open(new byte[52], options));
    }
}
