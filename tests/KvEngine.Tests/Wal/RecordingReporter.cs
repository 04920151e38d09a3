using KvEngine.Wal;

namespace KvEngine.Tests.Wal;

/// <summary>Collects what a <see cref="LogReader"/> reports.</summary>
internal sealed class RecordingReporter : ILogReporter
{
    public List<(long Bytes, string Reason, long Offset)> Reports { get; } = new();

    public void Corruption(long bytesDropped, string reason, long fileOffset) =>
        Reports.Add((bytesDropped, reason, fileOffset));
}
