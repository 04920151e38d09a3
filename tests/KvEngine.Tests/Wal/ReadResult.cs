using KvEngine.Wal;

namespace KvEngine.Tests.Wal;

/// <summary>What reading a whole log produced, for the log tests.</summary>
internal sealed record ReadResult(
    List<byte[]> Records,
    List<long> Offsets,
    LogReader Reader,
    RecordingReporter Reporter,
    KvCorruptionException? Error);
