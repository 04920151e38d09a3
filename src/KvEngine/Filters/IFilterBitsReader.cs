namespace KvEngine.Filters;

/// <summary>Queries one filter block. Immutable after construction; thread-safe.</summary>
internal interface IFilterBitsReader
{
    /// <summary>False only when <paramref name="key"/> was certainly not added.</summary>
    bool MayMatch(ReadOnlySpan<byte> key);
}
