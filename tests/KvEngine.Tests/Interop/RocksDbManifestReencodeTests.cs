using KvEngine.Versions;
using KvEngine.Storage;
using KvEngine.Tests.Wal;
using KvEngine.Util;
using KvEngine.Wal;

namespace KvEngine.Tests.Interop;

/// <summary>
/// Every VersionEdit of MANIFESTs RocksDB 7.8 wrote for whole databases (flushes, compactions,
/// trivial moves, blob files with garbage) decodes and re-encodes to the same bytes: our encoder
/// writes what RocksDB writes, including the blob records' custom-field end marker.
/// </summary>
public sealed class RocksDbManifestReencodeTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-interop-manifest-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Theory]
    [InlineData("leveled", new[] { "-benchmarks=fillrandom,overwrite", "-num=6000", "-write_buffer_size=65536",
        "-target_file_size_base=65536", "-max_bytes_for_level_base=196608", "-level0_file_num_compaction_trigger=2" })]
    [InlineData("blob", new[] { "-benchmarks=fillrandom,overwrite", "-num=4000", "-write_buffer_size=65536",
        "-enable_blob_files=true", "-min_blob_size=50", "-enable_blob_garbage_collection=true",
        "-blob_garbage_collection_age_cutoff=1.0", "-level0_file_num_compaction_trigger=2" })]
    public void RocksDbEditsReencodeByteForByte(string name, string[] benchArgs)
    {
        string db = Path.Combine(_dir.FullName, name);
        KvEngineReadsRocksDbTests.RunDbBench(db, ["-compression_type=lz4", .. benchArgs]);
        string manifest = Path.Combine(db, File.ReadAllText(Path.Combine(db, "CURRENT")).TrimEnd('\n'));

        int records = 0;
        bool sawBlobAddition = false;
        bool sawBlobGarbage = false;
        bool sawDeletion = false;
        using (ISequentialFile file = LocalFileSystem.Instance.OpenSequential(manifest))
        using (var scratch = new ByteBuffer())
        using (var encoded = new ByteBuffer())
        {
            LogReader reader = LogReader.ForManifest(file, manifest);
            while (reader.TryReadRecord(scratch, out ReadOnlySpan<byte> record))
            {
                VersionEdit edit = VersionEdit.Decode(record);
                encoded.Clear();
                edit.EncodeTo(encoded);
                Assert.True(record.SequenceEqual(encoded.WrittenSpan),
                    $"record {records} ({edit}) re-encodes as {Convert.ToHexString(encoded.WrittenSpan)}, RocksDB wrote {Convert.ToHexString(record)}");
                sawBlobAddition |= edit.BlobFileAdditions.Count > 0;
                sawBlobGarbage |= edit.BlobFileGarbages.Count > 0;
                sawDeletion |= edit.DeletedFiles.Count > 0;
                records++;
            }
        }
        Assert.True(records > 3, $"only {records} MANIFEST records");
        Assert.True(sawDeletion, "no compaction was recorded");
        if (name == "blob")
        {
            Assert.True(sawBlobAddition && sawBlobGarbage, "expected blob file additions and garbage");
        }
        RocksDbTools.RunOk("ldb", "manifest_dump", $"--path={manifest}");
    }
}
