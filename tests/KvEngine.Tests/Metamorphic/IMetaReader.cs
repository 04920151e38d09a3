namespace KvEngine.Tests.Metamorphic;

/// <summary>
/// What a metamorphic run reads through iterators: a database (or a checkpoint of it opened
/// read-only) under one configuration, or the model. Not thread-safe.
/// </summary>
internal interface IMetaReader : IDisposable
{
    /// <summary>
    /// Whether <see cref="NewCursor"/> confines a prefix-mode iterator itself (an engine with a
    /// prefix extractor, through PrefixSameAsStart); otherwise the caller wraps a total-order one
    /// in <see cref="ConfinedCursor"/>.
    /// </summary>
    bool ConfinesPrefixes { get; }

    /// <param name="family">0 = default.</param>
    /// <param name="snapshot">A snapshot id of the op log, or -1 for the latest state.</param>
    /// <param name="prefixMode">Only when <see cref="ConfinesPrefixes"/>.</param>
    IMetaCursor NewCursor(int family, int snapshot, byte[]? lower, byte[]? upper, bool prefixMode);
}
