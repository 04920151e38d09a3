using System.Text;
using KvEngine.Storage;
using KvEngine.Versions;
using Tools = KvEngine.Tests.Wal.RocksDbTools;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Tests.Interop;

/// <summary>
/// Ingestion against RocksDB 7.8's tools, both ways: a file RocksDB's SstFileWriter wrote
/// (<c>ldb write_extern_sst</c>) is ingested by us over overlapping data and read back; a database
/// where we ingested files (one given a non-zero global sequence number written into the file, one
/// at sequence 0 in the last level) is read by <c>ldb scan</c>, passes <c>ldb checkconsistency</c>,
/// and <c>sst_dump --command=scan</c> shows the written-back number on every key. A missing tool
/// fails the test with the install command (the interop tests never skip).
/// </summary>
public sealed class IngestInteropTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-ingest-");

    public void Dispose() => _dir.Delete(recursive: true);

    private static byte[] B(string s) => Encoding.ASCII.GetBytes(s);

    private static string S(ReadOnlySpan<byte> b) => Encoding.ASCII.GetString(b);

    private static string Hex(string s) => Convert.ToHexString(B(s));

    private static KvOptions Options() => new() { FileSystem = LocalFileSystem.Instance, DisableAutoCompactions = true };

    [Fact]
    public void FileWrittenByRocksDbsSstFileWriterIsIngestedAndReadBack()
    {
        string rocks = Path.Combine(_dir.FullName, "rocks");
        Tools.RunOk("ldb", $"--db={rocks}", "--create_if_missing", "put", "seed", "x");
        var input = new StringBuilder();
        for (int i = 0; i < 200; i++)
        {
            input.Append(System.Globalization.CultureInfo.InvariantCulture, $"key{i:D3} ==> rocks{i}\n");
        }
        string external = Path.Combine(_dir.FullName, "rocks.sst");
        // RocksDB's own SstFileWriter, fed "key ==> value" lines on stdin.
        Tools.RunOkWithInput("ldb", input.ToString(), $"--db={rocks}", "write_extern_sst", external);
        string props = KvEngine.Tests.Table.RocksDbTools.Properties(external);
        Assert.Contains("rocksdb.external_sst_file.version", props, StringComparison.Ordinal);

        string path = Path.Combine(_dir.FullName, "db");
        using KvDb db = KvDb.Open(path, Options());
        db.Put(B("key050"), B("ours"));
        db.Put(B("zzz"), B("ours"));
        db.Flush();
        ulong last = db.LatestSequenceNumber;
        db.IngestExternalFile([external]);
        Assert.Equal(last + 1, db.LatestSequenceNumber); // it overlaps our table: a new sequence number
        Assert.True(File.Exists(external));
        Assert.Equal("rocks50", S(db.Get(B("key050"))!));
        Assert.Equal("rocks199", S(db.Get(B("key199"))!));
        Assert.Equal("ours", S(db.Get(B("zzz"))!));
        using (KvIterator it = db.NewIterator())
        {
            int n = 0;
            for (it.SeekToFirst(); it.Valid; it.Next())
            {
                n++;
            }
            Assert.Equal(201, n);
        }
        db.CompactRange(null, null);
        Assert.Equal("rocks50", S(db.Get(B("key050"))!));
    }

    [Fact]
    public void DatabaseWithIngestedFilesIsReadByLdbAndSstDump()
    {
        string path = Path.Combine(_dir.FullName, "db");
        var expected = new SortedDictionary<string, string>(StringComparer.Ordinal);
        ulong assigned;
        ulong overlappingNumber;
        ulong bottomNumber;
        using (KvDb db = KvDb.Open(path, Options()))
        {
            for (int i = 0; i < 100; i++)
            {
                db.Put(B($"a{i:D3}"), B($"old{i}"));
                expected[$"a{i:D3}"] = $"old{i}";
            }
            db.Flush();
            db.CompactRange(null, null);

            string overlapping = Path.Combine(_dir.FullName, "overlap.sst");
            using (var writer = new SstFileWriter())
            {
                writer.Open(overlapping);
                for (int i = 0; i < 100; i += 2)
                {
                    writer.Put(B($"a{i:D3}"), B($"new{i}"));
                    expected[$"a{i:D3}"] = $"new{i}";
                }
                writer.DeleteRange(B("a090"), B("a095"));
                writer.Finish();
            }
            for (int i = 90; i < 95; i++)
            {
                if (i % 2 == 1)
                {
                    expected.Remove($"a{i:D3}");
                }
            }
            ulong last = db.LatestSequenceNumber;
            db.IngestExternalFile([overlapping]);
            assigned = last + 1;
            Assert.Equal(assigned, db.LatestSequenceNumber);

            string bottom = Path.Combine(_dir.FullName, "bottom.sst");
            using (var writer = new SstFileWriter())
            {
                writer.Open(bottom);
                for (int i = 0; i < 50; i++)
                {
                    writer.Put(B($"b{i:D3}"), B($"bottom{i}"));
                    expected[$"b{i:D3}"] = $"bottom{i}";
                }
                writer.Finish();
            }
            db.IngestExternalFile([bottom], new IngestExternalFileOptions { MoveFiles = true });
            Assert.False(File.Exists(bottom));

            Version v = db.Impl.DefaultFamily.Versions.Current;
            List<FileMetaData> all = Enumerable.Range(0, Version.NumLevels).SelectMany(l => v.Files(l)).ToList();
            overlappingNumber = all.Single(f => f.LargestSeqno == assigned).Number;
            FileMetaData b = v.Files(Version.NumLevels - 1).Single(f => InternalKeysUser(f.Smallest).StartsWith('b'));
            Assert.Equal(0UL, b.LargestSeqno);
            bottomNumber = b.Number;
            Assert.Equal(expected, KvEngine.Tests.Db.DbTestUtil.ReadAll(db));
        }

        List<KeyValuePair<byte[], byte[]>> scan = RocksDbOracle.Scan(path);
        Assert.Equal(expected.Select(kv => $"{kv.Key}={kv.Value}"), scan.Select(kv => $"{S(kv.Key)}={S(kv.Value)}"));
        RocksDbOracle.AssertConsistent(path);

        var entries = KvEngine.Tests.Table.RocksDbTools.Scan(FileNames.TableFile(path, overlappingNumber));
        Assert.Equal(50, entries.Count);
        Assert.All(entries, e => Assert.Equal(assigned, e.Seq));
        Assert.Equal(Hex("a000"), entries[0].Key);
        Assert.All(KvEngine.Tests.Table.RocksDbTools.Scan(FileNames.TableFile(path, bottomNumber)), e => Assert.Equal(0UL, e.Seq));
        Assert.Contains($"rocksdb.external_sst_file.global_seqno", KvEngine.Tests.Table.RocksDbTools.Properties(FileNames.TableFile(path, overlappingNumber)),
            StringComparison.Ordinal);

        // And RocksDB rewrites it all by compaction.
        Assert.Equal(expected.Select(kv => $"{kv.Key}={kv.Value}"),
            RocksDbOracle.ScanAfterCompaction(path).Select(kv => $"{S(kv.Key)}={S(kv.Value)}"));
    }

    private static string InternalKeysUser(byte[] internalKey) => S(KvEngine.Format.InternalKeys.UserKey(internalKey));
}
