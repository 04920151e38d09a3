namespace KvEngine;

/// <summary>
/// The user keys in [<see cref="Start"/>, <see cref="Limit"/>): start inclusive, limit exclusive
/// (RocksDB's Range), for <see cref="KvDb.GetApproximateSizes(IReadOnlyList{KeyRange}, SizeApproximationFlags)"/>.
/// An immutable value; the arrays are not copied and must not change while in use.
/// </summary>
public readonly struct KeyRange
{
    /// <summary>Creates the range [<paramref name="start"/>, <paramref name="limit"/>).</summary>
    public KeyRange(byte[] start, byte[] limit)
    {
        ArgumentNullException.ThrowIfNull(start);
        ArgumentNullException.ThrowIfNull(limit);
        Start = start;
        Limit = limit;
    }

    /// <summary>The first key of the range.</summary>
    public byte[] Start { get; }

    /// <summary>The first key after the range.</summary>
    public byte[] Limit { get; }
}
