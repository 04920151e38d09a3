using KvEngine.Util;
using KvEngine.Wal;

namespace KvEngine.Tests.Wal;

/// <summary>Builds logs in memory and reads them back for the log tests.</summary>
internal static class LogTestUtil
{
    public static byte[] Payload(int length, int seed)
    {
        var data = new byte[length];
        uint x = (uint)seed * 2654435761u + 1;
        for (int i = 0; i < data.Length; i++)
        {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            data[i] = (byte)x;
        }
        return data;
    }

    public static byte[] WriteLog(IEnumerable<byte[]> records, bool recyclable = false, ulong logNumber = 0)
    {
        using var file = new InMemoryWritableFile();
        var writer = new LogWriter(file, recyclable, logNumber);
        foreach (byte[] r in records)
        {
            writer.AddRecord(r);
        }
        return file.ToArray();
    }

    /// <summary>A physical record with a correct checksum.</summary>
    public static byte[] PhysicalRecord(byte type, ReadOnlySpan<byte> payload, uint? logNumber = null)
    {
        int headerSize = logNumber.HasValue ? LogFormat.RecyclableHeaderSize : LogFormat.HeaderSize;
        var result = new byte[headerSize + payload.Length];
        result[4] = (byte)payload.Length;
        result[5] = (byte)(payload.Length >> 8);
        result[6] = type;
        if (logNumber.HasValue)
        {
            Coding.EncodeFixed32(result.AsSpan(7), logNumber.Value);
        }
        payload.CopyTo(result.AsSpan(headerSize));
        uint crc = Crc32C.Compute(result.AsSpan(6));
        Coding.EncodeFixed32(result, Crc32C.Mask(crc));
        return result;
    }

    public static ReadResult ReadAll(byte[] log, WalRecoveryMode mode, ulong logNumber = 0, int maxRead = int.MaxValue)
    {
        var reporter = new RecordingReporter();
        var reader = new LogReader(new InMemorySequentialFile(log, maxRead), mode, reporter, logNumber);
        var records = new List<byte[]>();
        var offsets = new List<long>();
        using var scratch = new ByteBuffer();
        KvCorruptionException? error = null;
        try
        {
            while (reader.TryReadRecord(scratch, out ReadOnlySpan<byte> record))
            {
                records.Add(record.ToArray());
                offsets.Add(reader.LastRecordOffset);
            }
            Assert.False(reader.TryReadRecord(scratch, out _));
        }
        catch (KvCorruptionException e)
        {
            error = e;
        }
        return new ReadResult(records, offsets, reader, reporter, error);
    }

    public static IReadOnlyList<WalRecoveryMode> AllModes { get; } = new[]
    {
        WalRecoveryMode.TolerateCorruptedTailRecords,
        WalRecoveryMode.AbsoluteConsistency,
        WalRecoveryMode.PointInTimeRecovery,
        WalRecoveryMode.SkipAnyCorruptedRecords,
    };
}
