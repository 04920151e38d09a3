using KvEngine.Storage;
using KvEngine.Util;
using KvEngine.Wal;

namespace KvEngine.Fuzz.Targets;

/// <summary>
/// WAL target: the input is a whole log file, read from the in-memory file system with
/// <see cref="LogReader"/> in every <see cref="WalRecoveryMode"/> with checksums verified (as
/// recovery reads), and once more without (so mutations reach the fragment reassembly and the
/// recyclable-record checks behind the CRC). Every record is validated as a WriteBatch, as
/// recovery does before applying one; a batch rejected with a typed exception is skipped so the
/// rest of the log is still read. Thread-safe.
/// </summary>
internal static class LogTarget
{
    private const string Path = "/fuzz/000004.log";
    private const ulong LogNumber = 4;

    private static readonly WalRecoveryMode[] s_modes =
    [
        WalRecoveryMode.TolerateCorruptedTailRecords,
        WalRecoveryMode.AbsoluteConsistency,
        WalRecoveryMode.PointInTimeRecovery,
        WalRecoveryMode.SkipAnyCorruptedRecords,
    ];


    public static void Run(ReadOnlySpan<byte> input)
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/fuzz");
        fs.WriteAllBytes(Path, input);
        foreach (WalRecoveryMode mode in s_modes)
        {
            ReadAll(fs, mode, verifyChecksums: true);
        }
        ReadAll(fs, WalRecoveryMode.SkipAnyCorruptedRecords, verifyChecksums: false);
    }

    private static void ReadAll(FaultInjectionFileSystem fs, WalRecoveryMode mode, bool verifyChecksums)
    {
        using ISequentialFile file = fs.OpenSequential(Path);
        using var scratch = new ByteBuffer(4096);
        var reporter = new CountingReporter();
        var reader = new LogReader(file, mode, reporter, LogNumber, verifyChecksums, Path);
        try
        {
            while (reader.TryReadRecord(scratch, out ReadOnlySpan<byte> record))
            {
                try
                {
                    WriteBatchDecoder.Validate(record);
                }
                catch (KvException)
                {
                    // A damaged batch; recovery would stop here, the target reads on.
                }
            }
        }
        catch (KvCorruptionException)
        {
            // Damage this mode does not tolerate.
        }
        _ = reader.LastRecordEnd;
        _ = reader.CorruptionOffset;
    }

    /// <summary>Checks what the reader reports: byte counts and offsets are never negative.</summary>
    private sealed class CountingReporter : ILogReporter
    {
        public void Corruption(long bytesDropped, string reason, long fileOffset)
        {
            if (bytesDropped < 0 || fileOffset < 0 || string.IsNullOrEmpty(reason))
            {
                throw new FuzzFindingException($"LogReader reported {bytesDropped} bytes dropped at offset {fileOffset} ('{reason}').");
            }
        }
    }
}
