using System.Text;
using KvEngine.Compression;
using KvEngine.Filters;
using KvEngine.Format;
using KvEngine.Storage;
using KvEngine.Table;
using KvEngine.Wal;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Fuzz;

/// <summary>
/// Writes the seed inputs KvEngine's own writers produce (make-corpus.sh adds RocksDB 7.8's): small
/// tables in every layout the reader knows (compressions, checksums, format versions, full and
/// partitioned filters, partitioned and first-key indexes, range tombstones), WALs (plain,
/// recyclable, a record fragmented across blocks), a MANIFEST written by a real database, and
/// WriteBatch representations with every record kind. Deterministic: the same files every run.
/// </summary>
internal static class SeedWriter
{
    private const ulong FileCreationTime = 1_700_000_000;

    public static void WriteAll(string corpusDir)
    {
        WriteTables(Path.Combine(corpusDir, "table"));
        WriteLogs(Path.Combine(corpusDir, "wal"));
        WriteBatches(Path.Combine(corpusDir, "writebatch"));
        WriteManifest(Path.Combine(corpusDir, "manifest"));
    }

    private static void WriteTables(string dir)
    {
        Directory.CreateDirectory(dir);
        var bloom = new FastLocalBloomPolicy();
        (string Name, TableOptions Options)[] variants =
        [
            ("kv-plain-nochecksum.sst", new TableOptions { BlockSize = 256, Checksum = ChecksumType.None }),
            ("kv-lz4hc-bloom-crc32c.sst", new TableOptions { BlockSize = 256, Compression = CompressionType.Lz4HC, FilterPolicy = bloom, Checksum = ChecksumType.Crc32C }),
            ("kv-lz4-bloom-xxhash.sst", new TableOptions { BlockSize = 256, Compression = CompressionType.Lz4, FilterPolicy = bloom, Checksum = ChecksumType.XxHash }),
            ("kv-zstd-xxhash64.sst", new TableOptions { BlockSize = 256, Compression = CompressionType.Zstd, Checksum = ChecksumType.XxHash64 }),
            ("kv-zstd-partitioned.sst", new TableOptions { BlockSize = 256, Compression = CompressionType.Zstd, FilterPolicy = bloom, IndexType = IndexType.TwoLevelIndexSearch, PartitionFilters = true, MetadataBlockSize = 128 }),
            ("kv-partitioned-coupled-nochecksum.sst", new TableOptions { BlockSize = 256, Checksum = ChecksumType.None, FilterPolicy = bloom, IndexType = IndexType.TwoLevelIndexSearch, PartitionFilters = true, DecouplePartitionedFilters = false, MetadataBlockSize = 128 }),
        ];
        foreach ((string name, TableOptions options) in variants)
        {
            using IWritableFile file = LocalFileSystem.Instance.CreateWritable(Path.Combine(dir, name));
            using var builder = new TableBuilder(options, file, new TableBuildContext { FileCreationTime = FileCreationTime });
            ulong sequence = 1000;
            for (int i = 0; i < 60; i++)
            {
                byte[] user = Encoding.ASCII.GetBytes($"key{i * 3:D5}");
                ValueType type = (i % 11) switch { 3 => ValueType.Deletion, 7 => ValueType.SingleDeletion, 9 => ValueType.Merge, _ => ValueType.Value };
                byte[] value = type is ValueType.Deletion or ValueType.SingleDeletion ? [] : Encoding.ASCII.GetBytes($"value-{i}-{new string((char)('a' + (i % 26)), i % 17)}");
                builder.Add(InternalKeys.Create(user, sequence - (ulong)i, type), value);
            }
            builder.AddRangeTombstone(InternalKeys.Create("key00010"u8, 2000, ValueType.RangeDeletion), "key00020"u8);
            builder.AddRangeTombstone(InternalKeys.Create("key00050"u8, 2001, ValueType.RangeDeletion), "key00090"u8);
            builder.Finish();
        }
    }

    private static void WriteLogs(string dir)
    {
        Directory.CreateDirectory(dir);
        using (IWritableFile file = LocalFileSystem.Instance.CreateWritable(Path.Combine(dir, "kv-plain.log")))
        {
            var log = new LogWriter(file);
            for (int i = 0; i < 8; i++)
            {
                log.AddRecord(Batch(100 + (ulong)i * 10, i));
            }
        }
        using (IWritableFile file = LocalFileSystem.Instance.CreateWritable(Path.Combine(dir, "kv-recyclable.log")))
        {
            var log = new LogWriter(file, recyclable: true, logNumber: 4);
            for (int i = 0; i < 4; i++)
            {
                log.AddRecord(Batch(200 + (ulong)i * 10, i));
            }
        }
        using (IWritableFile file = LocalFileSystem.Instance.CreateWritable(Path.Combine(dir, "kv-fragmented.log")))
        {
            // One record that spans the first 32 KiB block boundary (First, Middle..., Last fragments).
            var log = new LogWriter(file);
            log.AddRecord(Batch(300, 0));
            using var big = new WriteBatch();
            big.Put("big"u8, new byte[LogFormat.BlockSize + 100]);
            big.Sequence = 310;
            log.AddRecord(big.Data);
            log.AddRecord(Batch(320, 1));
        }
    }

    private static void WriteBatches(string dir)
    {
        Directory.CreateDirectory(dir);
        for (int i = 0; i < 4; i++)
        {
            File.WriteAllBytes(Path.Combine(dir, $"kv-batch{i}{(i % 2 == 1 ? "-merge-unsupported" : "")}.bin"), Batch(500 + (ulong)i, i));
        }
        // Column family records (4: live, 2: dropped in the target), LogData and Noop.
        var rep = new List<byte>(Batch(600, 0)[..12]);
        rep.AddRange([(byte)WriteBatchTag.ColumnFamilyValue, 2, 1, (byte)'k', 1, (byte)'v']);
        rep.AddRange([(byte)WriteBatchTag.LogData, 3, (byte)'b', (byte)'l', (byte)'b']);
        rep.AddRange([(byte)WriteBatchTag.Noop]);
        rep.AddRange([(byte)WriteBatchTag.ColumnFamilyDeletion, 2, 1, (byte)'k']);
        rep.AddRange([(byte)WriteBatchTag.Value, 1, (byte)'a', 1, (byte)'b']);
        byte[] bytes = [.. rep];
        bytes[8] = 3; // three counted records
        bytes[9] = bytes[10] = bytes[11] = 0;
        File.WriteAllBytes(Path.Combine(dir, "kv-families.bin"), bytes);
    }

    /// <summary>Puts, deletes, a single delete, a range deletion and (odd variants) a merge.</summary>
    private static byte[] Batch(ulong sequence, int variant)
    {
        using var batch = new WriteBatch();
        for (int i = 0; i < 3 + variant; i++)
        {
            batch.Put(Encoding.ASCII.GetBytes($"k{variant}-{i}"), Encoding.ASCII.GetBytes($"v{variant}-{i}-{new string('x', i * 5)}"));
        }
        batch.Delete(Encoding.ASCII.GetBytes($"k{variant}-0"));
        batch.SingleDelete(Encoding.ASCII.GetBytes($"k{variant}-1"));
        batch.DeleteRange(Encoding.ASCII.GetBytes($"k{variant}-2"), Encoding.ASCII.GetBytes($"k{variant}-4"));
        if (variant % 2 == 1)
        {
            batch.Merge("m"u8, "+1"u8);
        }
        batch.Sequence = sequence;
        return batch.Data.ToArray();
    }

    /// <summary>The MANIFEST of a small database: flushes, a range deletion, a compaction, a reopen.</summary>
    private static void WriteManifest(string dir)
    {
        Directory.CreateDirectory(dir);
        string db = Path.Combine(Path.GetTempPath(), $"kvengine-fuzz-seed-{Environment.ProcessId}");
        if (Directory.Exists(db))
        {
            Directory.Delete(db, recursive: true);
        }
        var options = new KvOptions { DisableAutoCompactions = true };
        for (int round = 0; round < 2; round++)
        {
            using KvDb kv = KvDb.Open(db, options);
            for (int flush = 0; flush < 3; flush++)
            {
                for (int i = 0; i < 20; i++)
                {
                    kv.Put(Encoding.ASCII.GetBytes($"key{round}-{flush}-{i:D3}"), Encoding.ASCII.GetBytes($"value{i}"));
                }
                kv.DeleteRange(Encoding.ASCII.GetBytes($"key{round}-{flush}-005"), Encoding.ASCII.GetBytes($"key{round}-{flush}-009"));
                kv.Flush();
            }
            kv.CompactRange(null, null);
        }
        foreach (string manifest in Directory.EnumerateFiles(db, "MANIFEST-*"))
        {
            File.Copy(manifest, Path.Combine(dir, "kv-" + Path.GetFileName(manifest)), overwrite: true);
        }
        Directory.Delete(db, recursive: true);
    }
}
