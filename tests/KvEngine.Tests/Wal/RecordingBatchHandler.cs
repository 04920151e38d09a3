using System.Text;
using KvEngine.Wal;

namespace KvEngine.Tests.Wal;

/// <summary>Writes each operation as text ("PUT k v", "DEL k", ...) with keys and values in hex.</summary>
internal struct RecordingBatchHandler : IWriteBatchHandler
{
    public RecordingBatchHandler()
    {
    }

    public List<string> Operations { get; } = new();

    public readonly void Put(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) =>
        Operations.Add($"PUT {Convert.ToHexString(key)} {Convert.ToHexString(value)}");

    public readonly void Delete(ReadOnlySpan<byte> key) => Operations.Add($"DEL {Convert.ToHexString(key)}");

    public readonly void SingleDelete(ReadOnlySpan<byte> key) => Operations.Add($"SDEL {Convert.ToHexString(key)}");

    public readonly void DeleteRange(ReadOnlySpan<byte> begin, ReadOnlySpan<byte> end) =>
        Operations.Add($"DELRANGE {Convert.ToHexString(begin)} {Convert.ToHexString(end)}");

    public readonly void Merge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) =>
        Operations.Add($"MERGE {Convert.ToHexString(key)} {Convert.ToHexString(value)}");

    public static string Hex(string text) => Convert.ToHexString(Encoding.UTF8.GetBytes(text));
}
