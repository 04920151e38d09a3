using System.Text;
using KvEngine.Wal;

namespace KvEngine.Tests.Wal;

/// <summary>Writes each operation as text ("PUT k v", "DEL k", ...) with keys and values in hex.</summary>
internal struct RecordingBatchHandler : IWriteBatchHandler
{
    public RecordingBatchHandler()
    {
    }

    private uint _family;

    /// <summary>Operations in order; one of a family other than the default starts with "@id ".</summary>
    public List<string> Operations { get; } = new();

    public bool SeekColumnFamily(uint columnFamily)
    {
        _family = columnFamily;
        return true;
    }

    private readonly string Prefix => _family == 0 ? "" : $"@{_family} ";

    public readonly void Put(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) =>
        Operations.Add(Prefix + $"PUT {Convert.ToHexString(key)} {Convert.ToHexString(value)}");

    public readonly void Delete(ReadOnlySpan<byte> key) => Operations.Add(Prefix + $"DEL {Convert.ToHexString(key)}");

    public readonly void SingleDelete(ReadOnlySpan<byte> key) => Operations.Add(Prefix + $"SDEL {Convert.ToHexString(key)}");

    public readonly void DeleteRange(ReadOnlySpan<byte> begin, ReadOnlySpan<byte> end) =>
        Operations.Add(Prefix + $"DELRANGE {Convert.ToHexString(begin)} {Convert.ToHexString(end)}");

    public readonly void Merge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) =>
        Operations.Add(Prefix + $"MERGE {Convert.ToHexString(key)} {Convert.ToHexString(value)}");

    public static string Hex(string text) => Convert.ToHexString(Encoding.UTF8.GetBytes(text));
}
