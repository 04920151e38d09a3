namespace KvEngine.Table;

/// <summary>
/// Unwinds a lookup attempt that needs a block the operation has not fetched yet (see
/// <see cref="DeferredBlockReads"/>). Never escapes to callers: the asynchronous lookup that
/// started the attempt catches its own instance (one per <see cref="DeferredBlockReads"/>, pooled
/// with it), fetches the recorded reads and tries again.
/// </summary>
internal sealed class BlockReadDeferredException : Exception
{
    public BlockReadDeferredException()
        : base("A block read was deferred to an asynchronous fetch.")
    {
    }
}
