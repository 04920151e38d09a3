using Microsoft.Extensions.Options;

namespace KvEngine.Extensions.Caching;

/// <summary>
/// Checks <see cref="KvEngineCacheOptions"/> when they are first built (at host start with
/// ValidateOnStart), with the ranges KvEngine's open enforces, so a bad setting fails the host with
/// every problem listed instead of failing the open with the first. Stateless and thread-safe.
/// </summary>
internal sealed class KvEngineCacheOptionsValidator : IValidateOptions<KvEngineCacheOptions>
{
    public ValidateOptionsResult Validate(string? name, KvEngineCacheOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var failures = new List<string>();
        const string Type = nameof(KvEngineCacheOptions);
        if (string.IsNullOrWhiteSpace(options.Path))
        {
            failures.Add($"{Type}.{nameof(KvEngineCacheOptions.Path)} is required: the directory of the cache's database.");
        }
        else if (options.Path.AsSpan().IndexOfAny(System.IO.Path.GetInvalidPathChars()) >= 0)
        {
            failures.Add($"{Type}.{nameof(KvEngineCacheOptions.Path)} '{options.Path}' contains characters not allowed in a path.");
        }
        if (!Enum.IsDefined(options.Compression))
        {
            failures.Add($"{Type}.{nameof(KvEngineCacheOptions.Compression)} {(int)options.Compression} is not a KvCompressionType.");
        }
        if (options.SyncWrites && options.DisableWal)
        {
            failures.Add($"{Type}.{nameof(KvEngineCacheOptions.SyncWrites)} needs the WAL: it cannot be combined with {nameof(KvEngineCacheOptions.DisableWal)}.");
        }
        Range(failures, nameof(KvEngineCacheOptions.BlockCacheSize), options.BlockCacheSize, 0, long.MaxValue);
        Range(failures, nameof(KvEngineCacheOptions.CompressedSecondaryCacheSize), options.CompressedSecondaryCacheSize, 0, long.MaxValue);
        Range(failures, nameof(KvEngineCacheOptions.WriteBufferSize), options.WriteBufferSize, 4096, 1L << 40);
        Range(failures, nameof(KvEngineCacheOptions.MaxWriteBufferNumber), options.MaxWriteBufferNumber, 2, int.MaxValue);
        Range(failures, nameof(KvEngineCacheOptions.MaxBackgroundJobs), options.MaxBackgroundJobs, 1, 64);
        Range(failures, nameof(KvEngineCacheOptions.TargetFileSizeBase), options.TargetFileSizeBase, 1024, long.MaxValue);
        Range(failures, nameof(KvEngineCacheOptions.MaxTotalWalSize), options.MaxTotalWalSize, 0, long.MaxValue);
        Range(failures, nameof(KvEngineCacheOptions.DelayedWriteRate), options.DelayedWriteRate, 1, long.MaxValue);
        Range(failures, nameof(KvEngineCacheOptions.MaxOpenFiles), options.MaxOpenFiles, -1, int.MaxValue);
        if (options.MaxOpenFiles == 0)
        {
            failures.Add($"{Type}.{nameof(KvEngineCacheOptions.MaxOpenFiles)} is -1 (unlimited) or a positive count, not 0.");
        }
        if (options.BloomBitsPerKey is { } bloom && !(bloom >= 0 && bloom <= 100))
        {
            failures.Add($"{Type}.{nameof(KvEngineCacheOptions.BloomBitsPerKey)} {bloom} is outside [0, 100].");
        }
        if (options.WalRecoveryMode is { } mode && !Enum.IsDefined(mode))
        {
            failures.Add($"{Type}.{nameof(KvEngineCacheOptions.WalRecoveryMode)} {(int)mode} is not a WalRecoveryMode.");
        }
        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }

    private static void Range(List<string> failures, string property, long? value, long min, long max)
    {
        if (value is { } v && (v < min || v > max))
        {
            failures.Add(max == long.MaxValue || max == int.MaxValue
                ? $"{nameof(KvEngineCacheOptions)}.{property} {v} is below its minimum {min}."
                : $"{nameof(KvEngineCacheOptions)}.{property} {v} is outside [{min}, {max}].");
        }
    }
}
