using KvEngine.Compression;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Storage;
using KvEngine.Table;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Table;

/// <summary>
/// Interop with RocksDB 7.8's installed tools: sst_dump must accept and print our tables exactly,
/// and we must read db_bench's tables exactly as sst_dump prints them.
/// </summary>
public sealed class RocksDbInteropTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-table-interop-");

    public void Dispose() => _dir.Delete(recursive: true);

    public static TheoryData<byte, byte, int> WriterCases()
    {
        var data = new TheoryData<byte, byte, int>();
        foreach (CompressionType c in new[] { CompressionType.None, CompressionType.Snappy, CompressionType.Lz4, CompressionType.Zstd })
        {
            data.Add((byte)c, (byte)ChecksumType.Crc32C, 0);
            data.Add((byte)c, (byte)ChecksumType.Xxh3, 0);
        }
        data.Add((byte)CompressionType.Lz4HC, (byte)ChecksumType.XxHash, 0);
        data.Add((byte)CompressionType.Zstd, (byte)ChecksumType.XxHash64, 0);
        data.Add((byte)CompressionType.None, (byte)ChecksumType.None, 0);
        data.Add((byte)CompressionType.Lz4, (byte)ChecksumType.Xxh3, 1); // delta-encoded index values, user-key spans
        data.Add((byte)CompressionType.Zstd, (byte)ChecksumType.Crc32C, 2); // filter + range tombstones + successor
        return data;
    }

    [Theory]
    [MemberData(nameof(WriterCases))]
    public void SstDumpAcceptsAndPrintsOurTables(byte codec, byte checksum, int variant)
    {
        var options = new TableOptions
        {
            Compression = (CompressionType)codec,
            Checksum = (ChecksumType)checksum,
            IndexBlockRestartInterval = variant == 1 ? 16 : 1,
            BlockSize = variant == 1 ? 512 : 4096,
            FilterPolicy = variant == 2 ? new ExactFilterPolicy() : null,
            IndexShortening = variant == 2 ? IndexShortening.ShortenSeparatorsAndSuccessor : IndexShortening.ShortenSeparators,
        };
        List<Entry> entries = TableTestUtil.MakeEntries(3000, seed: codec + (checksum * 7) + variant, maxValue: variant == 1 ? 900 : 200);
        string path = Path.Combine(_dir.FullName, "000007.sst");
        int tombstones = 0;
        using (IWritableFile file = LocalFileSystem.Instance.CreateWritable(path))
        using (var builder = new TableBuilder(options, file, new TableBuildContext { CreationTime = 1_700_000_000, OldestKeyTime = 1_600_000_000 }))
        {
            foreach (Entry e in entries)
            {
                builder.Add(e.Key, e.Value);
            }
            if (variant == 2)
            {
                builder.AddRangeTombstone(TableTestUtil.Key("key0000100", 5, ValueType.RangeDeletion), "key0000200"u8);
                builder.AddRangeTombstone(TableTestUtil.Key("key0000300", 9, ValueType.RangeDeletion), "key0000301"u8);
                tombstones = 2;
            }
            builder.Finish();
        }

        RocksDbTools.AssertSstDumpCheckPasses(path);
        RocksDbTools.AssertScanMatches(path, entries);

        string props = RocksDbTools.Properties(path);
        Assert.Contains($"# entries: {entries.Count + tombstones}\n", props, StringComparison.Ordinal);
        Assert.Contains($"# range deletions: {tombstones}\n", props, StringComparison.Ordinal);
        Assert.Contains("comparator name: leveldb.BytewiseComparator", props, StringComparison.Ordinal);
        Assert.Contains("column family name: default", props, StringComparison.Ordinal);
        Assert.Contains($"SST file compression algo: {CompressionTypeNames.ToRocksDbName(options.Compression)}", props, StringComparison.Ordinal);
        Assert.Contains("creation time: 1700000000", props, StringComparison.Ordinal);
        Assert.Contains("time stamp of earliest key: 1600000000", props, StringComparison.Ordinal);
        if (variant == 1)
        {
            Assert.Contains("index block size (user-key? 0, delta-value? 1)", props, StringComparison.Ordinal);
        }
        if (variant == 2)
        {
            Assert.Contains("filter policy name: test.ExactFilter", props, StringComparison.Ordinal);
        }

        // Our own reader agrees with the file too.
        using TableReader reader = TableReader.Open(LocalFileSystem.Instance.OpenRandomAccess(path), new FileInfo(path).Length, options, path);
        using InternalIterator it = reader.NewIterator(true);
        TableTestUtil.AssertSame(entries, TableTestUtil.ScanForward(it));
    }

    public static TheoryData<string, string> DbBenchCases() => new()
    {
        { "none", "-checksum_type=4" },
        { "lz4", "-checksum_type=1 -use_data_block_hash_index=1" },
        { "zstd", "-checksum_type=4 -index_block_restart_interval=4 -writes_before_delete_range=1000 -writes_per_range_tombstone=2000 -range_tombstone_width=40 -max_num_range_tombstones=6" },
        { "lz4", "-checksum_type=2 -format_version=2" },
        { "zstd", "-checksum_type=3 -format_version=3 -block_restart_interval=4" },
        { "none", "-checksum_type=0 -format_version=4" },
    };

    [Theory]
    [MemberData(nameof(DbBenchCases))]
    public void WeReadDbBenchTablesExactlyAsSstDumpDoes(string compression, string extra)
    {
        string db = Path.Combine(_dir.FullName, "db");
        var args = new List<string>
        {
            "-benchmarks=fillrandom", "-num=20000", "-value_size=100", $"-compression_type={compression}", $"-db={db}",
            "-bloom_bits=10", "-disable_wal=1", "-write_buffer_size=1048576", "-seed=7",
        };
        args.AddRange(extra.Split(' ', StringSplitOptions.RemoveEmptyEntries));
        (int rc, string stdout, string stderr) = RocksDbTools.Run("db_bench", args, 120_000);
        Assert.True(rc == 0, $"db_bench failed ({rc}): {stdout} {stderr}");

        string[] tables = Directory.GetFiles(db, "*.sst");
        Assert.NotEmpty(tables);
        ulong rangeDeletions = 0;
        foreach (string path in tables)
        {
            var expected = RocksDbTools.Scan(path);
            using TableReader reader = TableReader.Open(LocalFileSystem.Instance.OpenRandomAccess(path), new FileInfo(path).Length, new TableOptions(), path);
            List<Entry> forward;
            using (InternalIterator it = reader.NewIterator(verifyChecksums: true))
            {
                forward = TableTestUtil.ScanForward(it);
                TableTestUtil.AssertSame(forward, TableTestUtil.ScanBackward(it));
            }
            Assert.Equal(expected.Count, forward.Count);
            for (int i = 0; i < forward.Count; i++)
            {
                Assert.Equal(expected[i].Key, Convert.ToHexString(InternalKeys.UserKey(forward[i].Key)));
                Assert.Equal(expected[i].Seq, InternalKeys.Sequence(forward[i].Key));
                Assert.Equal(expected[i].Type, (int)InternalKeys.Type(forward[i].Key));
                Assert.Equal(expected[i].Value, Convert.ToHexString(forward[i].Value));
            }
            Assert.Equal("leveldb.BytewiseComparator", reader.Properties.ComparatorName);
            Assert.Equal(CompressionTypeNames.ToRocksDbName(compression switch
            {
                "lz4" => CompressionType.Lz4,
                "zstd" => CompressionType.Zstd,
                _ => CompressionType.None,
            }), reader.Properties.CompressionName);

            ulong tombstones = 0;
            using (InternalIterator? rd = reader.NewRangeTombstoneIterator())
            {
                for (rd?.SeekToFirst(); rd is { Valid: true }; rd.Next())
                {
                    Assert.Equal(ValueType.RangeDeletion, InternalKeys.Type(rd.Key));
                    Assert.True(rd.Value.SequenceCompareTo(InternalKeys.UserKey(rd.Key)) > 0);
                    tombstones++;
                }
            }
            Assert.Equal(reader.Properties.NumRangeDeletions, tombstones);
            Assert.Equal((ulong)forward.Count + tombstones, reader.Properties.NumEntries);
            rangeDeletions += tombstones;

            TableRoundTripTests.AssertGets(reader, forward);
        }
        if (extra.Contains("delete_range", StringComparison.Ordinal))
        {
            Assert.True(rangeDeletions > 0, "db_bench wrote no range tombstones");
        }
    }
}
