using System.Globalization;
using System.Text;
using System.Text.RegularExpressions;
using KvEngine.Filters;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Memory;
using KvEngine.Storage;
using KvEngine.Table;
using KvEngine.Tests.Table;

namespace KvEngine.Tests.Filters;

// Tables whose filters are sized for memory stay RocksDB tables: sst_dump 7.8 checks and scans
// them cleanly, and our reader holds each filter in exactly one size class.
public sealed partial class OptimizedFilterTableTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kv-optfilter-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Theory]
    [InlineData(700)]
    [InlineData(3000)]
    [InlineData(11_000)]
    public void SstDumpAcceptsTablesWithMemoryOptimizedFilters(int count)
    {
        using var allocator = new NativeAllocator(new NativeAllocatorOptions { DebugChecks = true });
        var policy = new FastLocalBloomPolicy(10);
        var options = new TableOptions { FilterPolicy = policy, OptimizeFiltersForMemory = true, FilterAllocator = allocator };
        List<Entry> entries = TableTestUtil.MakeEntries(count, seed: count);
        string path = Path.Combine(_dir.FullName, $"{count:D6}.sst");
        using (IWritableFile file = LocalFileSystem.Instance.CreateWritable(path))
        using (var builder = new TableBuilder(options, file, TableBuildContext.Default))
        {
            foreach (Entry e in entries)
            {
                builder.Add(e.Key, e.Value);
            }
            builder.Finish();
        }
        Assert.Equal(1, policy.MemoryOptimizer.FiltersSized + (SizeClasses.IsClassSize(FastLocalBloomMath.CalculateSpace(count, 10_000) - 5) ? 1 : 0));

        RocksDbTools.AssertSstDumpCheckPasses(path);
        var scanned = RocksDbTools.Scan(path);
        Assert.Equal(entries.Count, scanned.Count);
        for (int i = 0; i < entries.Count; i++)
        {
            Assert.Equal(Convert.ToHexString(InternalKeys.UserKey(entries[i].Key)), scanned[i].Key);
            Assert.Equal(InternalKeys.Sequence(entries[i].Key), scanned[i].Seq);
            Assert.Equal(Convert.ToHexString(entries[i].Value), scanned[i].Value);
        }
        string props = RocksDbTools.Properties(path);
        Assert.Contains("filter policy name: rocksdb.BuiltinBloomFilter", props, StringComparison.Ordinal);
        long filterSize = long.Parse(FilterSizeLine().Match(props).Groups[1].Value, CultureInfo.InvariantCulture);
        Assert.True(SizeClasses.IsClassSize(filterSize - FastLocalBloomMath.MetadataLength), $"filter block of {filterSize} bytes");

        using (TableReader reader = TableReader.Open(LocalFileSystem.Instance.OpenRandomAccess(path), new FileInfo(path).Length, options, path))
        {
            Assert.True(reader.HasFilter);
            Assert.Equal(filterSize - FastLocalBloomMath.MetadataLength, reader.FilterMemoryUsage);
            Assert.Equal(reader.FilterMemoryUsage, allocator.GetUsage().AllocatedBytes);
            foreach (Entry e in entries)
            {
                Assert.True(reader.KeyMayMatch(InternalKeys.UserKey(e.Key)));
            }
            using InternalIterator it = reader.NewIterator(true);
            TableTestUtil.AssertSame(entries, TableTestUtil.ScanForward(it));
        }
        Assert.Equal(new MemoryUsage(0, 0, allocator.GetUsage().ResidentBytes, 0), allocator.GetUsage());
    }

    [Fact]
    public void DatabaseWithTheOptionWritesTablesRocksDbReads()
    {
        string db = Path.Combine(_dir.FullName, "db");
        var options = new KvOptions { OptimizeFiltersForMemory = true, BloomBitsPerKey = 10, Compression = KvCompressionType.None };
        using (KvDb kv = KvDb.Open(db, options))
        {
            for (int i = 0; i < 5000; i++)
            {
                kv.Put(Encoding.ASCII.GetBytes($"key{i:D6}"), Encoding.ASCII.GetBytes($"value{i}"));
            }
            kv.Flush();
            for (int i = 0; i < 5000; i++)
            {
                Assert.Equal($"value{i}", Encoding.ASCII.GetString(kv.Get(Encoding.ASCII.GetBytes($"key{i:D6}"))!));
            }
            Assert.Null(kv.Get("absent"u8));
        }
        string[] tables = Directory.GetFiles(db, "*.sst");
        Assert.NotEmpty(tables);
        foreach (string table in tables)
        {
            RocksDbTools.AssertSstDumpCheckPasses(table);
            Assert.Equal(5000, RocksDbTools.Scan(table).Count);
            long filterSize = long.Parse(FilterSizeLine().Match(RocksDbTools.Properties(table)).Groups[1].Value, CultureInfo.InvariantCulture);
            Assert.True(SizeClasses.IsClassSize(filterSize - FastLocalBloomMath.MetadataLength), $"filter block of {filterSize} bytes");
        }
    }

    [GeneratedRegex(@"filter block size: (\d+)")]
    private static partial Regex FilterSizeLine();
}
