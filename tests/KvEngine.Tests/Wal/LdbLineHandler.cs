using System.Text;
using KvEngine.Wal;

namespace KvEngine.Tests.Wal;

/// <summary>Formats a batch's writes as `ldb dump_wal --print_value` does.</summary>
internal struct LdbLineHandler : IWriteBatchHandler
{
    public LdbLineHandler()
    {
    }

    private uint _family;

    public StringBuilder Text { get; } = new();

    public bool SeekColumnFamily(uint columnFamily)
    {
        _family = columnFamily;
        return true;
    }

    private static string Hex(ReadOnlySpan<byte> bytes) => "0x" + Convert.ToHexString(bytes);

    public readonly void Put(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) =>
        Text.Append("PUT(").Append(_family).Append(") : ").Append(Hex(key)).Append(" : ").Append(Hex(value)).Append(' ');

    public readonly void Delete(ReadOnlySpan<byte> key) => Text.Append("DELETE(").Append(_family).Append(") : ").Append(Hex(key)).Append(' ');

    public readonly void SingleDelete(ReadOnlySpan<byte> key) =>
        Text.Append("SINGLE_DELETE(").Append(_family).Append(") : ").Append(Hex(key)).Append(' ');

    public readonly void DeleteRange(ReadOnlySpan<byte> begin, ReadOnlySpan<byte> end) =>
        Text.Append("DELETE_RANGE(").Append(_family).Append(") : ").Append(Hex(begin)).Append(' ').Append(Hex(end)).Append(' ');

    public readonly void Merge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) =>
        Text.Append("MERGE(").Append(_family).Append(") : ").Append(Hex(key)).Append(" : ").Append(Hex(value)).Append(' ');
}
