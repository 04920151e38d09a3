using KvEngine.Cache;
using KvEngine.Memory;

namespace KvEngine.DbBench;

/// <summary>A cachebench value: one native buffer, freed by the cache. Immutable until freed.</summary>
internal sealed class BenchValue : CacheValue
{
    private readonly NativeBuffer _buffer;

    public BenchValue(NativeBuffer buffer) => _buffer = buffer;

    public override CacheEntryRole Role => CacheEntryRole.Other;

    public override long RequestedBytes => _buffer.Length;

    public override long AllocatedBytes => _buffer.UsableSize;

    public override bool CanDemote => true;

    public override ReadOnlySpan<byte> Contents => _buffer.Span;

    public override void Free() => _buffer.Dispose();
}
