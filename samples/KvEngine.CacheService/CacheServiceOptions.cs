using System.ComponentModel.DataAnnotations;

namespace KvEngine.CacheService;

/// <summary>The service's own settings (section "CacheService"). Not thread-safe: bound once at start.</summary>
public sealed class CacheServiceOptions
{
    /// <summary>Largest value a PUT may store, in bytes (16 MiB); larger bodies get 413.</summary>
    [Range(1, int.MaxValue - 64)]
    public int MaxValueBytes { get; set; } = 16 << 20;
}
