using KvEngine.Filters;
using KvEngine.Format;
using KvEngine.Table;

namespace KvEngine.Tests.Table;

/// <summary>
/// <see cref="TableBuilder.ExpectKeys"/>: a whole-table filter sized before the first entry. With
/// the exact user-key count the table is byte for byte the one built without it.
/// </summary>
public sealed class TableBuilderExpectKeysTests
{
    private static byte[] Build(TableOptions options, List<Entry> entries, long? expectKeys)
    {
        using var file = new MemoryWritableFile();
        using (var builder = new TableBuilder(options, file, new TableBuildContext { FileCreationTime = 1_700_000_000 }))
        {
            if (expectKeys is { } n)
            {
                builder.ExpectKeys(n);
            }
            foreach (Entry e in entries)
            {
                builder.Add(e.Key, e.Value);
            }
            builder.Finish();
        }
        return file.ToArray();
    }

    private static int DistinctUserKeys(List<Entry> entries)
    {
        var keys = new HashSet<string>();
        foreach (Entry e in entries)
        {
            keys.Add(Convert.ToHexString(InternalKeys.UserKey(e.Key)));
        }
        return keys.Count;
    }

    [Theory]
    [InlineData(1)]
    [InlineData(700)]
    [InlineData(12_000)]
    public void TheExactUserKeyCountBuildsTheSameTable(int count)
    {
        var options = new TableOptions { FilterPolicy = new FastLocalBloomPolicy(10) };
        List<Entry> entries = TableTestUtil.MakeEntries(count, seed: count); // some keys have three versions
        int distinct = DistinctUserKeys(entries);
        Assert.True(distinct < entries.Count || count == 1);
        Assert.Equal(Build(options, entries, null), Build(options, entries, distinct));
    }

    [Fact]
    public void AnUpperBoundGivesTheBoundsFilterAndEveryKeyStillMatches()
    {
        var options = new TableOptions { FilterPolicy = new FastLocalBloomPolicy(10) };
        List<Entry> entries = TableTestUtil.MakeEntries(3000, seed: 5);
        byte[] table = Build(options, entries, entries.Count);
        using TableReader reader = TableTestUtil.Open(table, options);
        Assert.Equal((ulong)FastLocalBloomMath.CalculateSpace(entries.Count, 10_000), reader.Properties.FilterSize);
        Assert.Equal((ulong)DistinctUserKeys(entries), reader.Properties.NumFilterEntries);
        foreach (Entry e in entries)
        {
            Assert.True(reader.KeyMayMatch(InternalKeys.UserKey(e.Key)));
        }
    }

    [Fact]
    public void PrefixFiltersPartitionedFiltersAndLateCallsAreNotPresized()
    {
        List<Entry> entries = TableTestUtil.MakeEntries(2000, seed: 9);
        int upper = entries.Count * 3;
        var prefix = new TableOptions { FilterPolicy = new FastLocalBloomPolicy(10), PrefixExtractor = KvPrefixExtractor.FixedPrefix(4) };
        Assert.Equal(Build(prefix, entries, null), Build(prefix, entries, upper));
        var partitioned = new TableOptions
        {
            FilterPolicy = new FastLocalBloomPolicy(10),
            IndexType = IndexType.TwoLevelIndexSearch,
            PartitionFilters = true,
            MetadataBlockSize = 512,
        };
        Assert.Equal(Build(partitioned, entries, null), Build(partitioned, entries, upper));

        var whole = new TableOptions { FilterPolicy = new FastLocalBloomPolicy(10) };
        using var file = new MemoryWritableFile();
        using (var builder = new TableBuilder(whole, file, new TableBuildContext { FileCreationTime = 1_700_000_000 }))
        {
            builder.Add(entries[0].Key, entries[0].Value);
            builder.ExpectKeys(upper); // after the first entry: ignored
            for (int i = 1; i < entries.Count; i++)
            {
                builder.Add(entries[i].Key, entries[i].Value);
            }
            builder.Finish();
        }
        Assert.Equal(Build(whole, entries, null), file.ToArray());
    }
}
