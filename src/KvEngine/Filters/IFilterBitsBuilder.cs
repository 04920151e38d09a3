using System.Buffers;

namespace KvEngine.Filters;

/// <summary>Accumulates keys for one filter. Not thread-safe; one builder per table being written.</summary>
internal interface IFilterBitsBuilder : IDisposable
{
    /// <summary>Adds a key (a user key, or a prefix). Consecutive duplicates count once.</summary>
    void AddKey(ReadOnlySpan<byte> key);

    /// <summary>Keys added since the last <see cref="Finish"/> (after consecutive-duplicate removal).</summary>
    int KeyCount { get; }

    /// <summary>
    /// Sizes the filter for <paramref name="expectedKeys"/> keys (an upper bound) before the first
    /// is added, so the builder need not keep every key's hash; false when it does not support that
    /// (it then collects keys as always).
    /// </summary>
    bool TryPresize(long expectedKeys) => false;

    /// <summary>Writes the finished filter block (bits and trailer) and resets for reuse.</summary>
    void Finish(IBufferWriter<byte> output);
}
