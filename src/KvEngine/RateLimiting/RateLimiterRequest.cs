namespace KvEngine.RateLimiting;

/// <summary>
/// A request waiting in a <see cref="TokenBucket"/>'s queue (RocksDB's GenericRateLimiter::Req):
/// the bytes still to grant and whether it has been granted. Guarded by the bucket's owner's lock.
/// </summary>
internal sealed class RateLimiterRequest
{
    public RateLimiterRequest(long bytes, KvIOPriority priority)
    {
        Bytes = bytes;
        Remaining = bytes;
        Priority = priority;
    }

    /// <summary>The bytes the request asked for when it was queued.</summary>
    public long Bytes { get; }

    /// <summary>The bytes not granted yet (a refill may grant part of a request; see <see cref="TokenBucket.Refill"/>).</summary>
    public long Remaining { get; set; }

    public KvIOPriority Priority { get; }

    /// <summary>True once every byte was granted; the request has then left its queue.</summary>
    public bool Granted { get; set; }

    /// <summary>Its place in its queue while it waits.</summary>
    internal LinkedListNode<RateLimiterRequest>? Node { get; set; }
}
