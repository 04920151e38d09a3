namespace KvEngine;

/// <summary>
/// One range deletion stored in a table: it deletes the user keys in
/// [<see cref="Begin"/>, <see cref="End"/>) written before <see cref="Sequence"/>. Immutable.
/// </summary>
public sealed class SstRangeTombstone
{
    internal SstRangeTombstone(byte[] begin, byte[] end, ulong sequence)
    {
        Begin = begin;
        End = end;
        Sequence = sequence;
    }

    /// <summary>The first user key deleted.</summary>
    public ReadOnlyMemory<byte> Begin { get; }

    /// <summary>The user key just past the range.</summary>
    public ReadOnlyMemory<byte> End { get; }

    /// <summary>The sequence number of the deletion.</summary>
    public ulong Sequence { get; }
}
