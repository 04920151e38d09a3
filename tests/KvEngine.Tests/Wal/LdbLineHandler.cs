using System.Text;
using KvEngine.Wal;

namespace KvEngine.Tests.Wal;

/// <summary>Formats a batch's writes as `ldb dump_wal --print_value` does (default column family).</summary>
internal struct LdbLineHandler : IWriteBatchHandler
{
    public LdbLineHandler()
    {
    }

    public StringBuilder Text { get; } = new();

    private static string Hex(ReadOnlySpan<byte> bytes) => "0x" + Convert.ToHexString(bytes);

    public readonly void Put(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) =>
        Text.Append("PUT(0) : ").Append(Hex(key)).Append(" : ").Append(Hex(value)).Append(' ');

    public readonly void Delete(ReadOnlySpan<byte> key) => Text.Append("DELETE(0) : ").Append(Hex(key)).Append(' ');

    public readonly void SingleDelete(ReadOnlySpan<byte> key) =>
        Text.Append("SINGLE_DELETE(0) : ").Append(Hex(key)).Append(' ');

    public readonly void DeleteRange(ReadOnlySpan<byte> begin, ReadOnlySpan<byte> end) =>
        Text.Append("DELETE_RANGE(0) : ").Append(Hex(begin)).Append(' ').Append(Hex(end)).Append(' ');

    public readonly void Merge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) =>
        Text.Append("MERGE(0) : ").Append(Hex(key)).Append(" : ").Append(Hex(value)).Append(' ');
}
