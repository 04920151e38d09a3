using System.Buffers.Binary;

namespace KvEngine.Replication;

// value := index: fixed64  term: fixed64   (little-endian), under key "applied" in the column
// family "kvengine_raft". See docs/formats/raft_snapshot.md.

/// <summary>
/// The Raft position a database has applied: stored in the same WriteBatch as the entry's writes,
/// so the database and its applied index never disagree after a crash. Immutable value.
/// </summary>
internal readonly record struct AppliedState(long Index, long Term)
{
    /// <summary>The column family holding the applied state (created second, so its id is 1).</summary>
    public const string ColumnFamilyName = "kvengine_raft";

    public const int EncodedLength = 16;

    /// <summary>The key of the applied state in <see cref="ColumnFamilyName"/>.</summary>
    public static ReadOnlySpan<byte> Key => "applied"u8;

    public void Encode(Span<byte> destination)
    {
        BinaryPrimitives.WriteInt64LittleEndian(destination, Index);
        BinaryPrimitives.WriteInt64LittleEndian(destination.Slice(8), Term);
    }

    /// <exception cref="KvCorruptionException">The value is not 16 bytes or holds negative numbers.</exception>
    public static AppliedState Decode(ReadOnlySpan<byte> value)
    {
        if (value.Length != EncodedLength)
        {
            throw new KvCorruptionException($"The Raft applied state is {value.Length} bytes, not {EncodedLength}.");
        }
        var state = new AppliedState(BinaryPrimitives.ReadInt64LittleEndian(value), BinaryPrimitives.ReadInt64LittleEndian(value.Slice(8)));
        if (state.Index < 0 || state.Term < 0)
        {
            throw new KvCorruptionException($"The Raft applied state is invalid (index {state.Index}, term {state.Term}).");
        }
        return state;
    }
}
