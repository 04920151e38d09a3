using KvEngine.Util;
using KvEngine.Wal;
using static KvEngine.Tests.Wal.LogTestUtil;

namespace KvEngine.Tests.Wal;

public class LogRoundTripTests
{
    private const int Block = LogFormat.BlockSize;
    private const int Header = LogFormat.HeaderSize;

    private static void AssertRoundTrip(IReadOnlyList<byte[]> records, int maxRead = int.MaxValue)
    {
        byte[] log = WriteLog(records);
        foreach (WalRecoveryMode mode in AllModes)
        {
            ReadResult result = ReadAll(log, mode, maxRead: maxRead);
            Assert.Null(result.Error);
            Assert.Empty(result.Reporter.Reports);
            Assert.False(result.Reader.StoppedOnCorruption);
            Assert.Equal(records.Count, result.Records.Count);
            for (int i = 0; i < records.Count; i++)
            {
                Assert.True(records[i].AsSpan().SequenceEqual(result.Records[i]), $"record {i} differs");
            }
            Assert.Equal(log.Length, result.Reader.LastRecordEnd);
        }
    }

    [Fact]
    public void EmptyFileHasNoRecords()
    {
        ReadResult result = ReadAll(Array.Empty<byte>(), WalRecoveryMode.AbsoluteConsistency);
        Assert.Empty(result.Records);
        Assert.Null(result.Error);
    }

    [Fact]
    public void EmptyRecordIsOneFullHeader()
    {
        byte[] log = WriteLog(new[] { Array.Empty<byte>() });
        Assert.Equal(Header, log.Length);
        Assert.Equal((byte)LogRecordType.Full, log[6]);
        AssertRoundTrip(new[] { Array.Empty<byte>(), Array.Empty<byte>() });
    }

    [Fact]
    public void TinyRecordsRoundTrip()
    {
        AssertRoundTrip(new[] { new byte[] { 1 }, Payload(5, 1), Array.Empty<byte>(), Payload(100, 2) });
    }

    [Fact]
    public void HeaderBytesMatchTheFormat()
    {
        byte[] payload = { (byte)'f', (byte)'o', (byte)'o' };
        byte[] log = WriteLog(new[] { payload });
        Assert.Equal(PhysicalRecord((byte)LogRecordType.Full, payload), log);
    }

    [Fact]
    public void RecordFillingABlockExactly()
    {
        byte[] exact = Payload(Block - Header, 3);
        byte[] log = WriteLog(new[] { exact });
        Assert.Equal(Block, log.Length);
        Assert.Equal((byte)LogRecordType.Full, log[6]);
        AssertRoundTrip(new[] { exact, Payload(10, 4) });
    }

    [Fact]
    public void RecordOneByteOverABlockIsFragmented()
    {
        byte[] log = WriteLog(new[] { Payload(Block - Header + 1, 5) });
        Assert.Equal(Block + Header + 1, log.Length);
        Assert.Equal((byte)LogRecordType.First, log[6]);
        Assert.Equal((byte)LogRecordType.Last, log[Block + 6]);
        AssertRoundTrip(new[] { Payload(Block - Header + 1, 5) });
    }

    [Theory]
    [InlineData(1)]
    [InlineData(6)]
    public void ShortBlockTailIsZeroFilled(int tail)
    {
        // The first record leaves `tail` bytes in the block: too few for a header.
        byte[] first = Payload(Block - Header - tail, 6);
        byte[] log = WriteLog(new[] { first, Payload(20, 7) });
        Assert.Equal(Block + Header + 20, log.Length);
        Assert.All(log.AsSpan(Block - tail, tail).ToArray(), b => Assert.Equal(0, b));
        AssertRoundTrip(new[] { first, Payload(20, 7) });
    }

    [Fact]
    public void TailOfExactlyAHeaderGetsAnEmptyFirstFragment()
    {
        byte[] first = Payload(Block - 2 * Header, 8);
        byte[] second = Payload(50, 9);
        byte[] log = WriteLog(new[] { first, second });
        Assert.Equal((byte)LogRecordType.First, log[Block - Header + 6]);
        Assert.Equal(0, log[Block - Header + 4] | log[Block - Header + 5]);
        Assert.Equal((byte)LogRecordType.Last, log[Block + 6]);
        AssertRoundTrip(new[] { first, second });
    }

    [Fact]
    public void MultiBlockRecordsWithMiddleFragments()
    {
        var records = new[] { Payload(10, 1), Payload(3 * Block + 123, 2), Payload(77, 3), Payload(2 * Block, 4) };
        byte[] log = WriteLog(records);
        Assert.Equal((byte)LogRecordType.Middle, log[Block + 6]);
        AssertRoundTrip(records);
        AssertRoundTrip(records, maxRead: 1000);
    }

    [Fact]
    public void RecordsLargerThanOneMebibyte()
    {
        AssertRoundTrip(new[] { Payload((1 << 20) + 17, 11), Payload(3, 12), Payload(3 << 20, 13) });
    }

    [Fact]
    public void ManyRecordsAcrossBlocksKeepHeadersInsideBlocks()
    {
        var records = new List<byte[]>();
        for (int i = 0; i < 500; i++)
        {
            records.Add(Payload((i * 37) % 1500, i));
        }
        byte[] log = WriteLog(records);
        AssertRoundTrip(records);

        // Walk the physical records: every header lies inside one block.
        int offset = 0;
        while (offset < log.Length)
        {
            int inBlock = Block - offset % Block;
            if (inBlock < Header)
            {
                Assert.All(log.AsSpan(offset, inBlock).ToArray(), b => Assert.Equal(0, b));
                offset += inBlock;
                continue;
            }
            int length = log[offset + 4] | (log[offset + 5] << 8);
            Assert.True(Header + length <= inBlock);
            offset += Header + length;
        }
        Assert.Equal(log.Length, offset);
    }

    [Fact]
    public void LastRecordOffsetPointsAtTheFirstHeader()
    {
        var records = new[] { Payload(100, 1), Payload(Block, 2), Payload(5, 3) };
        ReadResult result = ReadAll(WriteLog(records), WalRecoveryMode.AbsoluteConsistency);
        Assert.Equal(new long[] { 0, Header + 100, Header + 100 + Header + Block + Header }, result.Offsets);
    }

    [Fact]
    public void WriterContinuesAnExistingFileAtItsBlockOffset()
    {
        using var file = new InMemoryWritableFile();
        var first = new LogWriter(file);
        first.AddRecord(Payload(Block - Header - 3, 1));
        var second = new LogWriter(file);
        second.AddRecord(Payload(10, 2));
        byte[] log = file.ToArray();
        Assert.Equal(Block + Header + 10, log.Length);
        ReadResult result = ReadAll(log, WalRecoveryMode.AbsoluteConsistency);
        Assert.Equal(2, result.Records.Count);
    }

    [Fact]
    public void AddRecordNeitherFlushesNorSyncs()
    {
        using var file = new InMemoryWritableFile();
        var writer = new LogWriter(file);
        writer.AddRecord(Payload(3 * Block, 1));
        Assert.Equal(0, file.FlushCount);
        Assert.Equal(0, file.SyncCount);
    }

    [Fact]
    public void RecyclableRecordsRoundTripWithTheirLogNumber()
    {
        var records = new[] { Payload(10, 1), Payload(2 * Block, 2), Array.Empty<byte>() };
        byte[] log = WriteLog(records, recyclable: true, logNumber: 42);
        Assert.Equal((byte)LogRecordType.RecyclableFull, log[6]);
        Assert.Equal(42u, Coding.DecodeFixed32(log.AsSpan(7)));
        ReadResult result = ReadAll(log, WalRecoveryMode.AbsoluteConsistency, logNumber: 42);
        Assert.Null(result.Error);
        Assert.Equal(3, result.Records.Count);
        Assert.True(records[1].AsSpan().SequenceEqual(result.Records[1]));
        Assert.True(result.Reader.IsRecycled);
    }

    [Fact]
    public void ScratchOnlyHoldsFragmentedRecords()
    {
        byte[] log = WriteLog(new[] { Payload(10, 1), Payload(Block + 5, 2) });
        var reader = new LogReader(new InMemorySequentialFile(log), WalRecoveryMode.AbsoluteConsistency);
        using var scratch = new ByteBuffer();
        Assert.True(reader.TryReadRecord(scratch, out ReadOnlySpan<byte> r1));
        Assert.Equal(10, r1.Length);
        Assert.Equal(0, scratch.Length);
        Assert.True(reader.TryReadRecord(scratch, out ReadOnlySpan<byte> r2));
        Assert.Equal(Block + 5, r2.Length);
        Assert.Equal(Block + 5, scratch.Length);
    }
}
