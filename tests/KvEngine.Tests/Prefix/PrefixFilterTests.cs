using System.Text;
using KvEngine.Filters;
using KvEngine.Format;
using KvEngine.Tests.Table;
using KvEngine.Table;

namespace KvEngine.Tests.Prefix;

/// <summary>
/// The prefix extractors' semantics and names, what the filter builders put in a filter (RocksDB
/// 7.8's entry counts), the table properties, the extractor-name check that keeps a table written
/// under another extractor from being prefix-filtered, and the OPTIONS file round trip.
/// </summary>
public sealed class PrefixFilterTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-prefix-filter-");

    public void Dispose() => _dir.Delete(recursive: true);

    private static byte[] B(string s) => Encoding.ASCII.GetBytes(s);

    [Fact]
    public void FixedAndCappedExtractorsFollowRocksDb()
    {
        KvPrefixExtractor fixedFour = KvPrefixExtractor.FixedPrefix(4);
        Assert.Equal("rocksdb.FixedPrefix.4", fixedFour.Name);
        Assert.False(fixedFour.InDomain(B("abc")));
        Assert.True(fixedFour.InDomain(B("abcd")));
        Assert.Equal(B("abcd"), fixedFour.Transform(B("abcdef")).ToArray());
        Assert.Throws<ArgumentException>(() => fixedFour.Transform(B("ab")).ToArray());

        KvPrefixExtractor capped = KvPrefixExtractor.CappedPrefix(4);
        Assert.Equal("rocksdb.CappedPrefix.4", capped.Name);
        Assert.True(capped.InDomain(B("")));
        Assert.Equal(B("ab"), capped.Transform(B("ab")).ToArray());
        Assert.Equal(B("abcd"), capped.Transform(B("abcdefg")).ToArray());

        Assert.Throws<ArgumentOutOfRangeException>(() => KvPrefixExtractor.FixedPrefix(0));
        Assert.Throws<ArgumentOutOfRangeException>(() => KvPrefixExtractor.CappedPrefix(-1));
    }

    [Theory]
    [InlineData("rocksdb.FixedPrefix.8", "rocksdb.FixedPrefix.8")]
    [InlineData("fixed:3", "rocksdb.FixedPrefix.3")]
    [InlineData("rocksdb.CappedPrefix.12", "rocksdb.CappedPrefix.12")]
    [InlineData("capped:2", "rocksdb.CappedPrefix.2")]
    public void PersistedNamesRebuildTheBuiltIns(string value, string name)
    {
        KvPrefixExtractor? e = KvEngine.Prefix.PrefixExtractorNames.TryCreate(value, out bool known);
        Assert.True(known);
        Assert.Equal(name, e!.Name);
    }

    [Theory]
    [InlineData("nullptr", true)]
    [InlineData("", true)]
    [InlineData("rocksdb.FixedPrefix.0", false)]
    [InlineData("rocksdb.FixedPrefix.x", false)]
    [InlineData("my.CustomPrefix", false)]
    public void OtherNamesBuildNothing(string value, bool known)
    {
        Assert.Null(KvEngine.Prefix.PrefixExtractorNames.TryCreate(value, out bool k));
        Assert.Equal(known, k);
    }

    [Fact]
    public void FullFilterHoldsWholeKeysAndDeduplicatedPrefixes()
    {
        var policy = new FastLocalBloomPolicy(10);
        string[] keys = ["aaaa1", "aaaa2", "aaaa3", "abc", "bbbb", "bbbb1"];
        // RocksDB 7.8: prefix only -> one entry per run of equal prefixes ("abc" is out of the domain);
        // whole keys + prefixes -> every key, plus each new prefix ("bbbb" is its own prefix: the bits builder drops the repeat).
        Assert.Equal(2, Entries(new FullFilterBlockBuilder(policy, wholeKeyFiltering: false, prefixExtractor: KvPrefixExtractor.FixedPrefix(4)), keys));
        Assert.Equal(7, Entries(new FullFilterBlockBuilder(policy, wholeKeyFiltering: true, prefixExtractor: KvPrefixExtractor.FixedPrefix(4)), keys));
        Assert.Equal(6, Entries(new FullFilterBlockBuilder(policy, wholeKeyFiltering: true), keys));
        Assert.Equal(3, Entries(new FullFilterBlockBuilder(policy, wholeKeyFiltering: false, prefixExtractor: KvPrefixExtractor.CappedPrefix(4)), keys));
    }

    private static long Entries(FullFilterBlockBuilder builder, string[] keys)
    {
        using (builder)
        {
            foreach (string k in keys)
            {
                builder.Add(B(k));
            }
            return builder.EntriesAdded;
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void TablePropertiesNameTheExtractorAndPrefixOnlyFiltersAnswerByPrefix(bool partitioned)
    {
        var options = new TableOptions
        {
            FilterPolicy = new FastLocalBloomPolicy(10),
            PrefixExtractor = KvPrefixExtractor.FixedPrefix(3),
            WholeKeyFiltering = false,
            IndexType = partitioned ? IndexType.TwoLevelIndexSearch : IndexType.BinarySearch,
            PartitionFilters = partitioned,
            MetadataBlockSize = 128,
            BlockSize = 128,
        };
        var entries = new List<Entry>();
        ulong seq = 1;
        for (int p = 0; p < 200; p += 2)
        {
            for (int s = 0; s < 5; s++)
            {
                entries.Add(new Entry(TableTestUtil.Key($"{p:D3}-{s}", seq++), B($"v{p}-{s}")));
            }
        }
        byte[] file = TableTestUtil.Build(options, entries);
        using TableReader reader = TableTestUtil.Open(file, options);
        Assert.Equal("rocksdb.FixedPrefix.3", reader.Properties.PrefixExtractorName);
        Assert.True(reader.Properties.PrefixFiltering);
        Assert.False(reader.Properties.WholeKeyFiltering);
        Assert.True(reader.HasPrefixFilter);
        int ruledOut = 0;
        for (int p = 0; p < 200; p++)
        {
            byte[] target = TableTestUtil.Key($"{p:D3}-9", InternalKeys.MaxSequenceNumber, KvEngine.Format.ValueType.ValueTypeForSeek);
            bool may = reader.PrefixMayMatch(target);
            if (p % 2 == 0)
            {
                Assert.True(may, $"prefix {p:D3} is in the table");
                Assert.True(reader.KeyMayMatch(B($"{p:D3}-7")), "a prefix-only filter answers Get by prefix");
            }
            else if (!may)
            {
                ruledOut++;
                Assert.False(reader.KeyMayMatch(B($"{p:D3}-0")));
            }
        }
        Assert.True(ruledOut > 80, $"only {ruledOut} of 100 absent prefixes ruled out");
        Assert.True(reader.PrefixMayMatch(TableTestUtil.Key("1", 1)), "a key out of the domain is never filtered");

        // Read under another extractor, or none: no prefix filtering, and no whole keys to check.
        foreach (KvPrefixExtractor? other in new[] { KvPrefixExtractor.FixedPrefix(4), KvPrefixExtractor.CappedPrefix(3), null })
        {
            using TableReader otherReader = TableTestUtil.Open(file, options with { PrefixExtractor = other });
            Assert.False(otherReader.HasPrefixFilter);
            for (int p = 1; p < 200; p += 2)
            {
                Assert.True(otherReader.PrefixMayMatch(TableTestUtil.Key($"{p:D3}-9", 1)));
                Assert.True(otherReader.KeyMayMatch(B($"{p:D3}-0")));
            }
        }
    }

    [Fact]
    public void ADatabaseReopenedUnderAnotherExtractorIsNotPrefixFiltered()
    {
        string path = Path.Combine(_dir.FullName, "db");
        var keys = new List<byte[]>();
        using (KvDb kv = KvDb.Open(path, new KvOptions { PrefixExtractor = KvPrefixExtractor.FixedPrefix(6), WholeKeyFiltering = false, WriteBufferSize = 32 << 10, DisableAutoCompactions = true }))
        {
            for (int i = 0; i < 3000; i++)
            {
                byte[] key = B($"k{i % 300:D5}{i:D5}");
                kv.Put(key, key);
                keys.Add(key);
            }
            kv.Flush();
        }
        foreach (string table in Directory.GetFiles(path, "*.sst"))
        {
            using TableReader reader = TableTestUtil.Open(File.ReadAllBytes(table), new TableOptions());
            Assert.Equal("rocksdb.FixedPrefix.6", reader.Properties.PrefixExtractorName);
        }
        var stats = new KvStatistics();
        // FixedPrefix(4) groups keys the tables were not filtered by: using their filters would lose keys.
        // (No compaction: its output would be written, and filtered, under FixedPrefix(4).)
        using (KvDb kv = KvDb.Open(path, new KvOptions { PrefixExtractor = KvPrefixExtractor.FixedPrefix(4), WholeKeyFiltering = false, Statistics = stats, DisableAutoCompactions = true }))
        {
            foreach (byte[] key in keys)
            {
                Assert.Equal(key, kv.Get(key));
            }
            using KvIterator it = kv.NewIterator(new ReadOptions { PrefixSameAsStart = true });
            int n = 0;
            for (it.Seek(B("k001")); it.Valid; it.Next())
            {
                n++;
            }
            Assert.Equal(keys.Count(k => k.AsSpan().StartsWith(B("k001"))), n);
        }
        Assert.Equal(0, stats.GetTickerCount(Ticker.BloomFilterPrefixChecked));
        Assert.Equal(0, stats.GetTickerCount(Ticker.BloomFilterUseful));
    }

    [Fact]
    public async Task ScanAsyncIsARangeScanAcrossPrefixes()
    {
        string path = Path.Combine(_dir.FullName, "scan");
        using KvDb kv = KvDb.Open(path, new KvOptions { PrefixExtractor = KvPrefixExtractor.FixedPrefix(4), WholeKeyFiltering = false, DisableAutoCompactions = true });
        var expected = new List<string>();
        for (int t = 0; t < 4; t++)
        {
            for (int i = 0; i < 50; i++)
            {
                string key = $"{t:D2}{i % 5:D2}-{i:D3}"; // each table: its own prefixes
                kv.Put(B(key), B(key));
                expected.Add(key);
            }
            kv.Flush();
        }
        expected.Sort(StringComparer.Ordinal);
        var got = new List<string>();
        await foreach (KeyValuePair<byte[], byte[]> p in kv.ScanAsync(B("0009"), ReadOnlyMemory<byte>.Empty))
        {
            got.Add(Encoding.ASCII.GetString(p.Key));
        }
        // "0009" is a prefix no table holds: a prefix-mode seek would skip every table.
        Assert.Equal(expected.Where(k => string.CompareOrdinal(k, "0009") >= 0), got);
    }

    [Theory]
    [InlineData("fixed")]
    [InlineData("capped")]
    public void TheExtractorAndWholeKeyFilteringSurviveTheOptionsFile(string kind)
    {
        string path = Path.Combine(_dir.FullName, "db-" + kind);
        var options = new KvOptions
        {
            PrefixExtractor = kind == "fixed" ? KvPrefixExtractor.FixedPrefix(8) : KvPrefixExtractor.CappedPrefix(5),
            WholeKeyFiltering = false,
        };
        using (KvDb kv = KvDb.Open(path, options))
        {
            kv.Put(B("abcdefgh1"), B("v"));
        }
        string text = File.ReadAllText(Directory.GetFiles(path, "OPTIONS-*").Max(StringComparer.Ordinal)!);
        Assert.Contains("  prefix_extractor=" + options.PrefixExtractor.Name + "\n", text, StringComparison.Ordinal);
        Assert.Contains("  whole_key_filtering=false\n", text, StringComparison.Ordinal);
        KvOptions loaded = KvOptions.LoadLatest(path);
        Assert.Equal(options.PrefixExtractor.Name, loaded.PrefixExtractor!.Name);
        Assert.False(loaded.WholeKeyFiltering);
    }
}
