using KvEngine.Storage;
using KvEngine.Util;
using KvEngine.Wal;
using KvEngine.Tests.Wal;

namespace KvEngine.Tests.Storage;

/// <summary>
/// The memory-mapped WAL file: appends across window boundaries, what the file holds while open
/// (which is what a process kill leaves: appended bytes, then reserved zeros) and after Dispose,
/// and how the log reader reads that state, including a record torn by a kill in mid-copy.
/// </summary>
public sealed class LocalMappedWritableFileTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-mmap-");

    public void Dispose() => _dir.Delete(recursive: true);

    private string PathOf(string name) => Path.Combine(_dir.FullName, name);

    private static IWritableFile CreateMapped(string path)
    {
        IWritableFile f = LocalFileSystem.Instance.CreateLogFile(path, memoryMapped: true);
        Assert.IsType<LocalMappedWritableFile>(f); // Linux x64 CI: the mapped file, not the fallback
        return f;
    }

    [Fact]
    public void AppendsAcrossWindowsAreVisibleAtOnceAndTheFileIsCutToSizeOnDispose()
    {
        string path = PathOf("000001.log");
        var rng = new Random(5);
        var expected = new MemoryStream();
        using (IWritableFile f = CreateMapped(path))
        {
            while (expected.Length < 3 * LocalMappedWritableFile.WindowSize + 12_345)
            {
                var chunk = new byte[rng.Next(1, 70_000)];
                rng.NextBytes(chunk);
                f.Append(chunk);
                expected.Write(chunk);
                Assert.Equal(expected.Length, f.Size);
            }
            f.Flush();
            f.Sync();
            // While open (and after a kill): the appended bytes, then reserved zeros to a window boundary.
            byte[] onDisk = File.ReadAllBytes(path);
            Assert.Equal(0, onDisk.Length % LocalMappedWritableFile.WindowSize);
            Assert.True(onDisk.Length >= expected.Length);
            Assert.Equal(expected.ToArray(), onDisk.AsSpan(0, (int)expected.Length).ToArray());
            Assert.False(onDisk.AsSpan((int)expected.Length).ContainsAnyExcept((byte)0));
        }
        Assert.Equal(expected.ToArray(), File.ReadAllBytes(path));
    }

    [Fact]
    public void AnEmptyLogIsCutToNothing()
    {
        string path = PathOf("000002.log");
        using (IWritableFile f = CreateMapped(path))
        {
            Assert.Equal(LocalMappedWritableFile.WindowSize, new FileInfo(path).Length);
        }
        Assert.Equal(0, new FileInfo(path).Length);
    }

    [Fact]
    public void WithoutMappingTheLogIsAPlainFile()
    {
        string path = PathOf("000003.log");
        using (IWritableFile f = LocalFileSystem.Instance.CreateLogFile(path, memoryMapped: false))
        {
            Assert.IsType<LocalWritableFile>(f);
            f.Append([1, 2, 3]);
        }
        Assert.Equal(new byte[] { 1, 2, 3 }, File.ReadAllBytes(path));
    }

    /// <summary>
    /// What a kill leaves (the file as it is while open: records, then zeros) reads back whole
    /// in every recovery mode, with no damage reported.
    /// </summary>
    [Theory]
    [InlineData(WalRecoveryMode.AbsoluteConsistency)]
    [InlineData(WalRecoveryMode.TolerateCorruptedTailRecords)]
    [InlineData(WalRecoveryMode.PointInTimeRecovery)]
    [InlineData(WalRecoveryMode.SkipAnyCorruptedRecords)]
    public void TheStateAKillLeavesReadsBackWholeInEveryMode(WalRecoveryMode mode)
    {
        (byte[] snapshot, List<byte[]> records) = WriteAndSnapshot("000004.log", count: 3000);
        var reporter = new RecordingReporter();
        List<byte[]> read = ReadAll(snapshot, mode, reporter);
        Assert.Equal(records.Count, read.Count);
        for (int i = 0; i < records.Count; i++)
        {
            Assert.Equal(records[i], read[i]);
        }
        Assert.Empty(reporter.Reports);
    }

    /// <summary>
    /// A kill in the middle of a copy: the last record's header written, part of its payload not,
    /// then the reserved zeros. TolerateCorruptedTailRecords (and PointInTimeRecovery, which
    /// reports it) end the log before it; garbage after the zeros is still damage, and a MANIFEST
    /// reader still refuses the same bytes.
    /// </summary>
    [Fact]
    public void ARecordTornByAKillBeforeTheReservedZerosIsTheTornTail()
    {
        (byte[] snapshot, List<byte[]> records) = WriteAndSnapshot("000005.log", count: 500);
        int lastStart = LastRecordPayloadOffset(snapshot, records.Count);
        byte[] torn = (byte[])snapshot.Clone();
        int kept = Math.Min(10, records[^1].Length - 1);
        Array.Clear(torn, lastStart + kept, records[^1].Length - kept); // the copy stopped after a few bytes

        List<byte[]> read = ReadAll(torn, WalRecoveryMode.TolerateCorruptedTailRecords, new RecordingReporter());
        Assert.Equal(records.Count - 1, read.Count);

        var pit = new RecordingReporter();
        Assert.Equal(records.Count - 1, ReadAll(torn, WalRecoveryMode.PointInTimeRecovery, pit).Count);
        Assert.Single(pit.Reports);

        byte[] garbage = (byte[])torn.Clone();
        garbage[^100] = 0x5a; // something after the zeros: real damage, not a torn tail
        Assert.Throws<KvCorruptionException>(() => ReadAll(garbage, WalRecoveryMode.TolerateCorruptedTailRecords, new RecordingReporter()));

        Assert.Throws<KvCorruptionException>(() =>
        {
            var reader = LogReader.ForManifest(new InMemorySequentialFile(torn));
            using var scratch = new ByteBuffer(256);
            while (reader.TryReadRecord(scratch, out _))
            {
            }
        });
    }

    /// <summary>A database written through the mapped WAL: a copy of its directory taken while it is open (a kill's state) opens with every write.</summary>
    [Fact]
    public void ADatabaseCopiedWhileOpenRecoversEveryWriteFromTheMappedWal()
    {
        string db = PathOf("db"), copy = PathOf("copy");
        using (KvDb kv = KvDb.Open(db, new KvOptions { WriteBufferSize = 64 << 20 }))
        {
            for (int i = 0; i < 20_000; i++)
            {
                kv.Put(System.Text.Encoding.ASCII.GetBytes($"key{i:D6}"), System.Text.Encoding.ASCII.GetBytes($"value{i}"));
            }
            Directory.CreateDirectory(copy);
            foreach (string f in Directory.GetFiles(db))
            {
                if (Path.GetFileName(f) != "LOCK")
                {
                    File.Copy(f, Path.Combine(copy, Path.GetFileName(f)));
                }
            }
            string wal = Directory.GetFiles(copy, "*.log").Single();
            Assert.Equal(0, new FileInfo(wal).Length % LocalMappedWritableFile.WindowSize); // reserved zeros included
        }
        using KvDb reopened = KvDb.Open(copy, new KvOptions { CreateIfMissing = false, WalRecoveryMode = WalRecoveryMode.TolerateCorruptedTailRecords });
        for (int i = 0; i < 20_000; i += 997)
        {
            Assert.Equal($"value{i}", System.Text.Encoding.ASCII.GetString(reopened.Get(System.Text.Encoding.ASCII.GetBytes($"key{i:D6}"))!));
        }
        Assert.Equal("value19999", System.Text.Encoding.ASCII.GetString(reopened.Get("key019999"u8)!));
    }

    /// <summary>GetSortedWalFiles lists the WAL being written at its records' size, not the mapped file's reserved length.</summary>
    [Fact]
    public void TheSortedWalFilesGiveTheLiveMappedWalUpToItsLastRecord()
    {
        string db = PathOf("sizes");
        using KvDb kv = KvDb.Open(db, new KvOptions { WriteBufferSize = 64 << 20 });
        for (int i = 0; i < 500; i++)
        {
            kv.Put(System.Text.Encoding.ASCII.GetBytes($"key{i:D4}"), new byte[100]);
        }
        WalFileInfo wal = Assert.Single(kv.GetSortedWalFiles());
        string path = Path.Combine(db, wal.PathName.TrimStart('/'));
        Assert.Equal(LocalMappedWritableFile.WindowSize, new FileInfo(path).Length);
        Assert.InRange(wal.SizeBytes, 500 * 100, LocalMappedWritableFile.WindowSize - 1);
        byte[] prefix;
        using (var f = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite))
        {
            prefix = new byte[wal.SizeBytes];
            f.ReadExactly(prefix);
        }
        var reporter = new RecordingReporter();
        Assert.Equal(500, ReadAll(prefix, WalRecoveryMode.AbsoluteConsistency, reporter).Count); // whole records, nothing torn
        Assert.Empty(reporter.Reports);
    }

    private (byte[] Snapshot, List<byte[]> Records) WriteAndSnapshot(string name, int count)
    {
        string path = PathOf(name);
        var rng = new Random(count);
        var records = new List<byte[]>();
        using IWritableFile f = CreateMapped(path);
        var writer = new LogWriter(f);
        for (int i = 0; i < count; i++)
        {
            var r = new byte[rng.Next(1, i % 97 == 0 ? 70_000 : 400)]; // some span blocks
            rng.NextBytes(r);
            writer.AddRecord(r);
            records.Add(r);
        }
        f.Flush();
        return (File.ReadAllBytes(path), records);
    }

    private static List<byte[]> ReadAll(byte[] file, WalRecoveryMode mode, RecordingReporter reporter)
    {
        var reader = new LogReader(new InMemorySequentialFile(file), mode, reporter);
        using var scratch = new ByteBuffer(256);
        var result = new List<byte[]>();
        while (reader.TryReadRecord(scratch, out ReadOnlySpan<byte> record))
        {
            result.Add(record.ToArray());
        }
        return result;
    }

    // File offset of the last record's payload (its only fragment: the last record is small).
    private static int LastRecordPayloadOffset(byte[] file, int count)
    {
        var reader = new LogReader(new InMemorySequentialFile(file), WalRecoveryMode.AbsoluteConsistency);
        using var scratch = new ByteBuffer(256);
        for (int i = 0; i < count; i++)
        {
            Assert.True(reader.TryReadRecord(scratch, out _));
        }
        return (int)reader.LastRecordOffset + LogFormat.HeaderSize;
    }
}
