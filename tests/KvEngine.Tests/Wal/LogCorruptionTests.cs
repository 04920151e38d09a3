using KvEngine.Util;
using KvEngine.Wal;
using static KvEngine.Tests.Wal.LogTestUtil;

namespace KvEngine.Tests.Wal;

public class LogCorruptionTests
{
    private const int Block = LogFormat.BlockSize;
    private const int Header = LogFormat.HeaderSize;

    // 40 records of 1000 bytes: 32 per block boundary region, record i at offset i * 1007.
    private static List<byte[]> ThousandByteRecords()
    {
        var records = new List<byte[]>();
        for (int i = 0; i < 40; i++)
        {
            records.Add(Payload(1000, i));
        }
        return records;
    }

    private static void AssertPrefix(IReadOnlyList<byte[]> expected, int count, ReadResult result)
    {
        Assert.Equal(count, result.Records.Count);
        for (int i = 0; i < count; i++)
        {
            Assert.True(expected[i].AsSpan().SequenceEqual(result.Records[i]), $"record {i} differs");
        }
    }

    [Theory]
    [InlineData(0)] // masked CRC
    [InlineData(4)] // length (low byte)
    [InlineData(6)] // type
    [InlineData(Header + 500)] // payload
    public void BitFlipInTheMiddleIsJudgedByTheRecoveryMode(int byteInRecord)
    {
        List<byte[]> records = ThousandByteRecords();
        byte[] log = WriteLog(records);
        const int damaged = 3;
        long damagedOffset = damaged * (Header + 1000);
        log[damagedOffset + byteInRecord] ^= 0x10;

        ReadResult tolerate = ReadAll(log, WalRecoveryMode.TolerateCorruptedTailRecords);
        Assert.NotNull(tolerate.Error);
        AssertPrefix(records, damaged, tolerate);
        Assert.Contains($"offset {damagedOffset}", tolerate.Error!.Message, StringComparison.Ordinal);

        ReadResult absolute = ReadAll(log, WalRecoveryMode.AbsoluteConsistency);
        Assert.NotNull(absolute.Error);
        AssertPrefix(records, damaged, absolute);

        ReadResult pointInTime = ReadAll(log, WalRecoveryMode.PointInTimeRecovery);
        Assert.Null(pointInTime.Error);
        AssertPrefix(records, damaged, pointInTime);
        Assert.True(pointInTime.Reader.StoppedOnCorruption);
        Assert.Equal(damagedOffset, pointInTime.Reader.CorruptionOffset);
        Assert.Single(pointInTime.Reporter.Reports);

        // Skip drops the rest of block 0 (its last record continues into block 1 and loses its
        // start too), then reads on: records 0-2 and every record that starts in block 1 or later.
        ReadResult skip = ReadAll(log, WalRecoveryMode.SkipAnyCorruptedRecords);
        Assert.Null(skip.Error);
        var expected = new List<byte[]>();
        for (int i = 0; i < records.Count; i++)
        {
            if (i < damaged || i * (Header + 1000L) >= Block)
            {
                expected.Add(records[i]);
            }
        }
        AssertPrefix(expected, expected.Count, skip);
        Assert.Equal(skip.Reporter.Reports.Count, skip.Reader.CorruptionCount);
        Assert.Equal(damagedOffset, skip.Reporter.Reports[0].Offset);
        Assert.Equal(Block - damagedOffset, skip.Reporter.Reports[0].Bytes);
        Assert.Contains(skip.Reporter.Reports, r => r.Reason.StartsWith("missing start of fragmented record", StringComparison.Ordinal));
    }

    [Fact]
    public void ChecksumMismatchOfTheLastRecordIsCorruptionEvenWhenTolerant()
    {
        List<byte[]> records = ThousandByteRecords().GetRange(0, 5);
        byte[] log = WriteLog(records);
        log[^1] ^= 1;
        Assert.NotNull(ReadAll(log, WalRecoveryMode.TolerateCorruptedTailRecords).Error);
        ReadResult pit = ReadAll(log, WalRecoveryMode.PointInTimeRecovery);
        AssertPrefix(records, 4, pit);
        Assert.Equal("checksum mismatch", pit.Reader.CorruptionReason);
        AssertPrefix(records, 4, ReadAll(log, WalRecoveryMode.SkipAnyCorruptedRecords));
    }

    [Fact]
    public void TruncationAtEveryOffsetOfASmallLog()
    {
        var records = new[] { Payload(5, 1), Payload(40, 2), Array.Empty<byte>(), Payload(300, 3) };
        byte[] log = WriteLog(records);
        var ends = new List<int>();
        int end = 0;
        foreach (byte[] r in records)
        {
            end += Header + r.Length;
            ends.Add(end);
        }

        for (int length = 0; length <= log.Length; length++)
        {
            byte[] cut = log.AsSpan(0, length).ToArray();
            int complete = ends.Count(e => e <= length);
            bool atBoundary = length == 0 || ends.Contains(length);
            foreach (WalRecoveryMode mode in AllModes)
            {
                ReadResult result = ReadAll(cut, mode);
                AssertPrefix(records, complete, result);
                bool damaged = !atBoundary && mode is WalRecoveryMode.AbsoluteConsistency or WalRecoveryMode.PointInTimeRecovery;
                Assert.Equal(damaged && mode == WalRecoveryMode.AbsoluteConsistency, result.Error != null);
                Assert.Equal(damaged && mode == WalRecoveryMode.PointInTimeRecovery, result.Reader.StoppedOnCorruption);
                Assert.Equal(damaged ? 1 : 0, result.Reporter.Reports.Count);
            }
        }
    }

    [Fact]
    public void TruncationInsideAMultiBlockRecord()
    {
        var records = new[] { Payload(100, 1), Payload(2 * Block + 10, 2) };
        byte[] log = WriteLog(records);
        foreach (int length in new[] { Block - 1, Block, Block + 3, Block + Header, 2 * Block, log.Length - 1 })
        {
            byte[] cut = log.AsSpan(0, length).ToArray();
            foreach (WalRecoveryMode mode in AllModes)
            {
                ReadResult result = ReadAll(cut, mode);
                AssertPrefix(records, 1, result);
                Assert.Equal(mode == WalRecoveryMode.AbsoluteConsistency, result.Error != null);
                Assert.Equal(mode == WalRecoveryMode.PointInTimeRecovery, result.Reader.StoppedOnCorruption);
            }
        }
    }

    [Theory]
    [InlineData(100)]
    [InlineData(Block)]
    [InlineData(3 * Block)]
    public void ZeroFilledTailIsTheEndOfTheLogInEveryMode(int zeros)
    {
        var records = new[] { Payload(10, 1), Payload(Block + 10, 2) };
        byte[] written = WriteLog(records);
        // Preallocated space: zeros to `zeros` bytes past the records, then rounded so that the
        // file does not end with a sliver shorter than a header.
        int length = written.Length + zeros;
        if (length % Block is > 0 and < Header)
        {
            length += Header;
        }
        byte[] log = new byte[length];
        written.CopyTo(log, 0);
        foreach (WalRecoveryMode mode in AllModes)
        {
            ReadResult result = ReadAll(log, mode);
            Assert.Null(result.Error);
            Assert.Empty(result.Reporter.Reports);
            AssertPrefix(records, 2, result);
        }
    }

    [Fact]
    public void ZeroTailEndingInAShortSliverIsATruncatedHeader()
    {
        byte[] written = WriteLog(new[] { Payload(10, 1) });
        byte[] log = new byte[Block + 3];
        written.CopyTo(log, 0);
        Assert.Null(ReadAll(log, WalRecoveryMode.TolerateCorruptedTailRecords).Error);
        Assert.Null(ReadAll(log, WalRecoveryMode.SkipAnyCorruptedRecords).Error);
        Assert.NotNull(ReadAll(log, WalRecoveryMode.AbsoluteConsistency).Error);
        ReadResult pit = ReadAll(log, WalRecoveryMode.PointInTimeRecovery);
        Assert.Single(pit.Records);
        Assert.Equal("truncated header", pit.Reader.CorruptionReason);
        Assert.Equal(Block, pit.Reader.CorruptionOffset);
        Assert.Equal(3, pit.Reporter.Reports[0].Bytes);
    }

    [Fact]
    public void ZeroHeaderInsideAFragmentedRecordDropsIt()
    {
        byte[] first = PhysicalRecord((byte)LogRecordType.First, Payload(10, 1));
        byte[] after = PhysicalRecord((byte)LogRecordType.Full, Payload(10, 2));
        byte[] log = new byte[Block + after.Length];
        first.CopyTo(log, 0);
        after.CopyTo(log, Block);
        ReadResult skip = ReadAll(log, WalRecoveryMode.SkipAnyCorruptedRecords);
        Assert.Single(skip.Records);
        Assert.Equal("error in middle of record", skip.Reporter.Reports.Single().Reason);
        Assert.NotNull(ReadAll(log, WalRecoveryMode.TolerateCorruptedTailRecords).Error);
    }

    [Fact]
    public void UnknownRecordTypeIsReported()
    {
        byte[] log = [.. PhysicalRecord(12, Payload(10, 1)), .. PhysicalRecord((byte)LogRecordType.Full, Payload(3, 2))];
        ReadResult skip = ReadAll(log, WalRecoveryMode.SkipAnyCorruptedRecords);
        Assert.Single(skip.Records);
        Assert.Equal((10L, "unknown record type 12", 0L), skip.Reporter.Reports.Single());
        Assert.NotNull(ReadAll(log, WalRecoveryMode.AbsoluteConsistency).Error);
        Assert.Empty(ReadAll(log, WalRecoveryMode.PointInTimeRecovery).Records);
    }

    [Fact]
    public void FirstFollowedByFullReportsThePartialRecord()
    {
        byte[] log =
        [
            .. PhysicalRecord((byte)LogRecordType.First, Payload(10, 1)),
            .. PhysicalRecord((byte)LogRecordType.Full, Payload(3, 2)),
        ];
        ReadResult skip = ReadAll(log, WalRecoveryMode.SkipAnyCorruptedRecords);
        Assert.Single(skip.Records);
        Assert.Equal(3, skip.Records[0].Length);
        Assert.Equal("partial record without end(1)", skip.Reporter.Reports.Single().Reason);
        Assert.Empty(ReadAll(log, WalRecoveryMode.PointInTimeRecovery).Records);
    }

    [Fact]
    public void LastWithoutFirstIsReported()
    {
        byte[] log = [.. PhysicalRecord((byte)LogRecordType.Last, Payload(10, 1))];
        ReadResult skip = ReadAll(log, WalRecoveryMode.SkipAnyCorruptedRecords);
        Assert.Empty(skip.Records);
        Assert.Equal("missing start of fragmented record(2)", skip.Reporter.Reports.Single().Reason);
    }

    [Fact]
    public void LengthRunningPastAFullBlockIsABadRecordLength()
    {
        var records = new[] { Payload(10, 1), Payload(Block, 2), Payload(10, 3) };
        byte[] log = WriteLog(records);
        log[5] = 0x80; // first record claims 32778 bytes: past its full block, and the file goes on
        ReadResult pit = ReadAll(log, WalRecoveryMode.PointInTimeRecovery);
        Assert.Empty(pit.Records);
        Assert.Equal("bad record length", pit.Reader.CorruptionReason);
        Assert.NotNull(ReadAll(log, WalRecoveryMode.TolerateCorruptedTailRecords).Error);
        ReadResult skip = ReadAll(log, WalRecoveryMode.SkipAnyCorruptedRecords);
        AssertPrefix(new[] { records[2] }, 1, skip);
    }

    [Fact]
    public void RecycledLogEndsAtThePreviousIncarnationsRecords()
    {
        var old = new List<byte[]>();
        for (int i = 0; i < 10; i++)
        {
            old.Add(Payload(100, i));
        }
        byte[] log = WriteLog(old, recyclable: true, logNumber: 7);
        var fresh = new[] { Payload(100, 50), Payload(100, 51), Payload(100, 52) };
        WriteLog(fresh, recyclable: true, logNumber: 9).CopyTo(log, 0);

        foreach (WalRecoveryMode mode in AllModes)
        {
            ReadResult result = ReadAll(log, mode, logNumber: 9);
            Assert.Null(result.Error);
            Assert.Empty(result.Reporter.Reports);
            AssertPrefix(fresh, 3, result);
        }
        Assert.Empty(ReadAll(log, WalRecoveryMode.AbsoluteConsistency, logNumber: 8).Records);
    }

    [Fact]
    public void RecycledLogWithGarbageAfterTheLiveRecords()
    {
        var old = new List<byte[]>();
        for (int i = 0; i < 10; i++)
        {
            old.Add(Enumerable.Repeat((byte)1, 100).ToArray());
        }
        byte[] log = WriteLog(old, recyclable: true, logNumber: 7);
        var fresh = new[] { Payload(150, 50), Payload(150, 51), Payload(150, 52) };
        // 3 * 161 bytes end inside an old record's payload: the next "header" is 0x01 bytes.
        WriteLog(fresh, recyclable: true, logNumber: 9).CopyTo(log, 0);

        ReadResult tolerate = ReadAll(log, WalRecoveryMode.TolerateCorruptedTailRecords, logNumber: 9);
        Assert.Null(tolerate.Error);
        Assert.Empty(tolerate.Reporter.Reports);
        AssertPrefix(fresh, 3, tolerate);

        ReadResult pit = ReadAll(log, WalRecoveryMode.PointInTimeRecovery, logNumber: 9);
        AssertPrefix(fresh, 3, pit);
        Assert.Equal("checksum mismatch", pit.Reader.CorruptionReason);
    }

    [Fact]
    public void UncompressedSetCompressionTypeRecordIsAccepted()
    {
        byte[] log =
        [
            .. PhysicalRecord((byte)LogRecordType.SetCompressionType, new byte[4]),
            .. PhysicalRecord((byte)LogRecordType.Full, Payload(3, 2)),
        ];
        ReadResult result = ReadAll(log, WalRecoveryMode.AbsoluteConsistency);
        Assert.Null(result.Error);
        Assert.Single(result.Records);
    }

    [Fact]
    public void CompressedLogIsRejectedAsUnsupported()
    {
        byte[] log =
        [
            .. PhysicalRecord((byte)LogRecordType.SetCompressionType, new byte[] { 7, 0, 0, 0 }),
            .. PhysicalRecord((byte)LogRecordType.Full, Payload(3, 2)),
        ];
        var reader = new LogReader(new InMemorySequentialFile(log), WalRecoveryMode.SkipAnyCorruptedRecords);
        using var scratch = new ByteBuffer();
        var e = Assert.Throws<KvNotSupportedException>(() => reader.TryReadRecord(scratch, out _));
        Assert.Contains("compress", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void ManifestReaderToleratesOnlyATornTail()
    {
        var records = new[] { Payload(50, 1), Payload(60, 2) };
        byte[] log = WriteLog(records);
        var torn = log.AsSpan(0, log.Length - 5).ToArray();
        using var scratch = new ByteBuffer();
        var reader = LogReader.ForManifest(new InMemorySequentialFile(torn), "MANIFEST-000001");
        Assert.True(reader.TryReadRecord(scratch, out _));
        Assert.False(reader.TryReadRecord(scratch, out _));

        log[Header + 3] ^= 0xFF;
        reader = LogReader.ForManifest(new InMemorySequentialFile(log), "MANIFEST-000001");
        var e = Assert.Throws<KvCorruptionException>(() => reader.TryReadRecord(scratch, out _));
        Assert.Contains("MANIFEST-000001", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void ChecksumsCanBeSkipped()
    {
        byte[] log = WriteLog(new[] { Payload(50, 1) });
        log[0] ^= 1;
        var reader = new LogReader(new InMemorySequentialFile(log), WalRecoveryMode.AbsoluteConsistency, verifyChecksums: false);
        using var scratch = new ByteBuffer();
        Assert.True(reader.TryReadRecord(scratch, out ReadOnlySpan<byte> record));
        Assert.Equal(50, record.Length);
    }
}
