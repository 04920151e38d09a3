using System.Diagnostics;
using System.Text;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Table;
using KvEngine.Tests.Interop;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Table;

/// <summary>
/// SstFileWriter against RocksDB 7.8: sst_dump reads our files with the same entries and
/// properties as a file RocksDB's own SstFileWriter (ldb write_extern_sst) makes from the same
/// keys, RocksDB ingests our files, our reader reads RocksDB's, and misuse throws.
/// </summary>
public class SstFileWriterTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-sstwriter-");

    public void Dispose() => _dir.Delete(recursive: true);

    private string PathOf(string name) => Path.Combine(_dir.FullName, name);

    private static byte[] B(string s) => Encoding.ASCII.GetBytes(s);

    private static List<(string Key, string Value)> Pairs(int count) =>
        Enumerable.Range(0, count).Select(i => ($"key{i:D6}", $"value-{i}-{new string((char)('a' + (i % 26)), i % 50)}")).ToList();

    /// <summary>Runs a RocksDB tool with <paramref name="stdin"/> on its standard input.</summary>
    internal static (int ExitCode, string Stdout, string Stderr) RunWithInput(string tool, IEnumerable<string> args, string stdin)
    {
        var psi = new ProcessStartInfo(tool)
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string a in args)
        {
            psi.ArgumentList.Add(a);
        }
        using Process process = Process.Start(psi) ?? throw new InvalidOperationException($"{tool} did not start");
        Task<string> stdout = process.StandardOutput.ReadToEndAsync();
        Task<string> stderr = process.StandardError.ReadToEndAsync();
        process.StandardInput.Write(stdin);
        process.StandardInput.Close();
        Assert.True(process.WaitForExit(60_000), $"{tool} timed out");
        process.WaitForExit();
        return (process.ExitCode, stdout.Result, stderr.Result);
    }

    /// <summary>A RocksDB database made by ldb holding <paramref name="pairs"/> (ldb's default options: Snappy, no filter).</summary>
    private string RocksDbWith(string name, IEnumerable<(string Key, string Value)> pairs)
    {
        string db = PathOf(name);
        foreach ((string key, string value) in pairs)
        {
            (int rc, _, string err) = RocksDbTools.Run("ldb", [$"--db={db}", "--create_if_missing", "put", key, value]);
            Assert.True(rc == 0, err);
        }
        return db;
    }

    /// <summary>RocksDB's SstFileWriter output for <paramref name="pairs"/> (ldb write_extern_sst with the database's options).</summary>
    private string RocksDbExternalFile(string db, string name, IEnumerable<(string Key, string Value)> pairs, string compression = "snappy")
    {
        string path = PathOf(name);
        string input = string.Concat(pairs.Select(p => $"{p.Key} ==> {p.Value}\n"));
        (int rc, string stdout, string stderr) = RunWithInput("ldb", [$"--db={db}", $"--compression_type={compression}", "write_extern_sst", path], input);
        Assert.True(rc == 0 && File.Exists(path), $"ldb write_extern_sst failed ({rc}): {stdout} {stderr}");
        return path;
    }

    private ExternalSstFileInfo WriteOurs(string name, IEnumerable<(string Key, string Value)> pairs, ColumnFamilyOptions? options = null)
    {
        using var writer = new SstFileWriter(options ?? new ColumnFamilyOptions { BloomBitsPerKey = 0 });
        writer.Open(PathOf(name));
        foreach ((string key, string value) in pairs)
        {
            writer.Put(B(key), B(value));
        }
        return writer.Finish();
    }

    /// <summary>The sst_dump property lines that depend only on the entries and the table options.</summary>
    private static List<string> ComparableProperties(string file)
    {
        string[] kept =
        [
            "# data blocks", "# entries", "# deletions", "# merge operands", "# range deletions", "raw key size", "raw value size",
            "data block size", "index block size", "filter block size", "SST file compression algo", "comparator name",
            "DB identity", "original file number", "file creation time", "creation time", "# rocksdb.",
        ];
        return RocksDbTools.Properties(file).Split('\n').Select(l => l.Trim())
            .Where(l => kept.Any(k => l.StartsWith(k, StringComparison.Ordinal))).ToList();
    }

    [Fact]
    public void SstDumpReadsOurFileAsItReadsRocksDbsWriterOutput()
    {
        List<(string Key, string Value)> pairs = Pairs(500);
        string db = RocksDbWith("rocks", [("seed", "x")]);
        // Uncompressed, so block sizes compare (two Snappy encoders may pick different matches).
        string theirs = RocksDbExternalFile(db, "theirs.sst", pairs, compression: "no");
        ExternalSstFileInfo info = WriteOurs("ours.sst", pairs, new ColumnFamilyOptions { Compression = KvCompressionType.None, BloomBitsPerKey = 0 });

        Assert.Equal(RocksDbTools.Scan(theirs), RocksDbTools.Scan(info.FilePath));
        Assert.All(RocksDbTools.Scan(info.FilePath), e => Assert.Equal(0UL, e.Seq));
        List<string> ourProps = ComparableProperties(info.FilePath);
        Assert.Equal(ComparableProperties(theirs), ourProps);
        Assert.Contains("# rocksdb.external_sst_file.version: 0x02000000", ourProps);
        Assert.Contains("# rocksdb.external_sst_file.global_seqno: 0x0000000000000000", ourProps);
        Assert.Contains("DB identity: SST Writer", ourProps);
        RocksDbTools.AssertSstDumpCheckPasses(info.FilePath);

        Assert.Equal(500, info.NumEntries);
        Assert.Equal(0, info.NumRangeDelEntries);
        Assert.Equal(new FileInfo(info.FilePath).Length, info.FileSize);
        Assert.Equal(0UL, info.SequenceNumber);
        Assert.Equal(2, info.Version);
        Assert.Equal("key000000", Encoding.ASCII.GetString(info.SmallestKey.Span));
        Assert.Equal("key000499", Encoding.ASCII.GetString(info.LargestKey.Span));
    }

    [Fact]
    public void DeletesRangeDeletionsAndFiltersReachSstDump()
    {
        string path = PathOf("mixed.sst");
        using var writer = new SstFileWriter(new ColumnFamilyOptions { Compression = KvCompressionType.Lz4, BloomBitsPerKey = 10, IndexType = KvIndexType.TwoLevelIndexSearch, PartitionFilters = true });
        writer.Open(path);
        writer.DeleteRange(B("m"), B("p"));
        writer.Put(B("a"), B("1"));
        writer.Delete(B("b"));
        writer.DeleteRange(B("c"), B("e"));
        writer.DeleteRange(B("c"), B("d")); // same begin, shorter: covered by [c, e)
        writer.Put(B("z"), B("26"));
        Assert.True(writer.FileSize >= 0);
        ExternalSstFileInfo info = writer.Finish();

        List<(string Key, ulong Seq, int Type, string Value)> scan = RocksDbTools.Scan(path);
        Assert.Equal([("61", 0UL, 1, "31"), ("62", 0UL, 0, ""), ("7A", 0UL, 1, "3236")], scan);
        string props = RocksDbTools.Properties(path);
        Assert.Contains("# range deletions: 2", props, StringComparison.Ordinal);
        Assert.Contains("# deletions: 3", props, StringComparison.Ordinal); // RocksDB counts range deletions as deletions too
        Assert.Contains("filter policy name: rocksdb.BuiltinBloomFilter", props, StringComparison.Ordinal);
        Assert.Contains("SST file compression algo: LZ4", props, StringComparison.Ordinal);
        RocksDbTools.AssertSstDumpCheckPasses(path);

        Assert.Equal(3, info.NumEntries);
        Assert.Equal(3, info.NumRangeDelEntries);
        Assert.Equal("c", Encoding.ASCII.GetString(info.SmallestRangeDelKey.Span));
        Assert.Equal("p", Encoding.ASCII.GetString(info.LargestRangeDelKey.Span));

        using TableReader reader = TableReader.Open(new KvEngine.Storage.LocalRandomAccessFile(path), info.FileSize, new TableOptions { FilterPolicy = new KvEngine.Filters.FastLocalBloomPolicy(10) }, path);
        using InternalIterator tombstones = reader.NewRangeTombstoneIterator()!;
        var ranges = new List<string>();
        for (tombstones.SeekToFirst(); tombstones.Valid; tombstones.Next())
        {
            Assert.Equal(0UL, InternalKeys.Sequence(tombstones.Key));
            ranges.Add(Encoding.ASCII.GetString(InternalKeys.UserKey(tombstones.Key)) + "-" + Encoding.ASCII.GetString(tombstones.Value));
        }
        Assert.Equal(["c-e", "m-p"], ranges);
    }

    [Fact]
    public void RocksDbIngestsOurFile()
    {
        string db = RocksDbWith("ingest", [("key000001", "old"), ("key000002", "old"), ("zzz", "old")]);
        ExternalSstFileInfo info = WriteOurs("ingest.sst", [("key000001", "new"), ("key000003", "new")]);
        (int rc, string stdout, string stderr) = RocksDbTools.Run("ldb", [$"--db={db}", "ingest_extern_sst", info.FilePath]);
        Assert.True(rc == 0, $"ldb ingest_extern_sst failed ({rc}): {stdout} {stderr}");
        (rc, stdout, stderr) = RocksDbTools.Run("ldb", [$"--db={db}", "scan"]);
        Assert.True(rc == 0, stderr);
        Assert.Equal(["key000001 : new", "key000002 : old", "key000003 : new", "zzz : old"], stdout.Split('\n', StringSplitOptions.RemoveEmptyEntries));
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void WeReadADatabaseThatIngestedAnExternalFileOverOlderData(bool writeGlobalSeqno)
    {
        // RocksDB gives the ingested file a global seqno above the older data: written into the
        // file's properties (write_global_seqno, the checksum left stale) or only in the MANIFEST.
        string db = RocksDbWith("ingested", [("key000001", "old"), ("key000002", "old")]);
        string theirs = RocksDbExternalFile(db, "rocks-writer.sst", [("key000001", "new"), ("key000003", "new")]);
        (int rc, string stdout, string stderr) = RocksDbTools.Run("ldb", [$"--db={db}", "ingest_extern_sst", theirs, $"--write_global_seqno={(writeGlobalSeqno ? "true" : "false")}"]);
        Assert.True(rc == 0, $"ldb ingest_extern_sst failed ({rc}): {stdout} {stderr}");

        string copy = RocksDbOracle.Copy(db, "kv");
        using (KvDb kv = KvDb.Open(copy, new KvOptions()))
        {
            Assert.Equal("new", Encoding.ASCII.GetString(kv.Get(B("key000001"))!));
            Assert.Equal("old", Encoding.ASCII.GetString(kv.Get(B("key000002"))!));
            Assert.Equal("new", Encoding.ASCII.GetString(kv.Get(B("key000003"))!));
            var seen = new List<string>();
            using (KvIterator it = kv.NewIterator())
            {
                for (it.SeekToFirst(); it.Valid; it.Next())
                {
                    seen.Add(Encoding.ASCII.GetString(it.Key) + "=" + Encoding.ASCII.GetString(it.Value));
                }
            }
            Assert.Equal(["key000001=new", "key000002=old", "key000003=new"], seen);
            kv.CompactRange(null, null);
            Assert.Equal("new", Encoding.ASCII.GetString(kv.Get(B("key000001"))!));
        }
    }

    [Fact]
    public void OurReaderReadsRocksDbsWriterOutput()
    {
        string db = RocksDbWith("reader", [("seed", "x")]);
        List<(string Key, string Value)> pairs = Pairs(300);
        string theirs = RocksDbExternalFile(db, "theirs.sst", pairs);
        using TableReader reader = TableReader.Open(new KvEngine.Storage.LocalRandomAccessFile(theirs), new FileInfo(theirs).Length, new TableOptions(), theirs);
        Assert.Equal(0UL, reader.GlobalSequenceNumber);
        Assert.Equal("SST Writer", reader.Properties.DbId);
        Assert.NotEqual(0UL, reader.Properties.ExternalSstFileGlobalSeqnoOffset);
        using InternalIterator it = reader.NewIterator(verifyChecksums: true);
        int i = 0;
        for (it.SeekToFirst(); it.Valid; it.Next(), i++)
        {
            Assert.Equal(pairs[i].Key, Encoding.ASCII.GetString(InternalKeys.UserKey(it.Key)));
            Assert.Equal(0UL, InternalKeys.Sequence(it.Key));
            Assert.Equal(pairs[i].Value, Encoding.ASCII.GetString(it.Value));
        }
        Assert.Equal(pairs.Count, i);
    }

    [Fact]
    public void MisuseThrows()
    {
        string path = PathOf("misuse.sst");
        using (var writer = new SstFileWriter())
        {
            Assert.Throws<InvalidOperationException>(() => writer.Put(B("a"), B("1")));
            Assert.Throws<InvalidOperationException>(() => writer.Finish());
            writer.Open(path);
            Assert.Throws<InvalidOperationException>(() => writer.Open(PathOf("other.sst")));
            Assert.Throws<InvalidOperationException>(() => writer.Finish()); // no entries: RocksDB refuses an empty file
            writer.Put(B("b"), B("1"));
            Assert.Throws<ArgumentException>(() => writer.Put(B("b"), B("2")));
            Assert.Throws<ArgumentException>(() => writer.Put(B("a"), B("2")));
            Assert.Throws<ArgumentException>(() => writer.Delete(B("a")));
            Assert.Throws<ArgumentException>(() => writer.DeleteRange(B("z"), B("y")));
            writer.Put(B("c"), B("3"));
            ExternalSstFileInfo info = writer.Finish();
            Assert.Equal(2, info.NumEntries);
            Assert.Throws<InvalidOperationException>(() => writer.Put(B("d"), B("4")));
            Assert.Throws<InvalidOperationException>(() => writer.Finish());

            // A finished writer may write another file; an unfinished one is deleted on Dispose.
            writer.Open(PathOf("second.sst"));
            writer.Put(B("a"), B("1"));
        }
        Assert.True(File.Exists(path));
        Assert.False(File.Exists(PathOf("second.sst")));
        var disposed = new SstFileWriter();
        disposed.Dispose();
        Assert.Throws<ObjectDisposedException>(() => disposed.Open(path));
        Assert.Throws<ArgumentOutOfRangeException>(() => new SstFileWriter(new ColumnFamilyOptions { BlockSize = 1 }));
    }

    [Fact]
    public void BottommostCompressionIsUsedWhenSetAsRocksDbDoes()
    {
        ExternalSstFileInfo info = WriteOurs("bottom.sst", Pairs(50), new ColumnFamilyOptions { Compression = KvCompressionType.Lz4, BottommostCompression = KvCompressionType.Zstd });
        Assert.Contains("SST file compression algo: ZSTD", RocksDbTools.Properties(info.FilePath), StringComparison.Ordinal);
    }

    [Fact]
    public void AFileOfOnlyRangeDeletionsIsReadAndIngested()
    {
        string path = PathOf("only-ranges.sst");
        ExternalSstFileInfo info;
        using (var writer = new SstFileWriter(new KvOptions { Compression = KvCompressionType.None })) // a KvOptions gives its default family's settings
        {
            writer.Open(path);
            writer.DeleteRange(B("key000002"), B("key000004"));
            info = writer.Finish();
        }
        Assert.Equal(0, info.NumEntries);
        Assert.Equal(1, info.NumRangeDelEntries);
        Assert.True(info.SmallestKey.IsEmpty && info.LargestKey.IsEmpty);
        RocksDbTools.AssertSstDumpCheckPasses(path);
        Assert.Contains("# range deletions: 1", RocksDbTools.Properties(path), StringComparison.Ordinal);
        using (TableReader reader = TableReader.Open(new KvEngine.Storage.LocalRandomAccessFile(path), info.FileSize, new TableOptions(), path))
        {
            using InternalIterator points = reader.NewIterator(verifyChecksums: true);
            points.SeekToFirst();
            Assert.False(points.Valid);
            Assert.NotNull(reader.RangeDelHandle);
        }

        string db = RocksDbWith("ranges", [("key000001", "v"), ("key000002", "v"), ("key000003", "v"), ("key000004", "v")]);
        (int rc, string stdout, string stderr) = RocksDbTools.Run("ldb", [$"--db={db}", "ingest_extern_sst", path]);
        Assert.True(rc == 0, $"ldb ingest_extern_sst failed ({rc}): {stdout} {stderr}");
        (rc, stdout, stderr) = RocksDbTools.Run("ldb", [$"--db={db}", "scan"]);
        Assert.True(rc == 0, stderr);
        Assert.Equal(["key000001 : v", "key000004 : v"], stdout.Split('\n', StringSplitOptions.RemoveEmptyEntries));
    }
}
