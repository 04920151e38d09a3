namespace KvEngine.Cache;

/// <summary>
/// The zero-byte value a compressed secondary cache keeps for a key evicted once (admission: the
/// second eviction stores the block). Stateless singleton.
/// </summary>
internal sealed class CachePlaceholder : CacheValue
{
    public static CachePlaceholder Instance { get; } = new();

    private CachePlaceholder()
    {
    }

    public override CacheEntryRole Role => CacheEntryRole.Other;

    public override long RequestedBytes => 0;

    public override long AllocatedBytes => 0;

    public override bool CanDemote => false;

    public override ReadOnlySpan<byte> Contents => [];

    public override void Free()
    {
    }
}
