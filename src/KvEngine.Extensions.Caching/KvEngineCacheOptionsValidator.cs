using Microsoft.Extensions.Options;

namespace KvEngine.Extensions.Caching;

/// <summary>
/// Checks <see cref="KvEngineCacheOptions"/> when they are first built (at host start with
/// ValidateOnStart). Stateless and thread-safe.
/// </summary>
internal sealed class KvEngineCacheOptionsValidator : IValidateOptions<KvEngineCacheOptions>
{
    public ValidateOptionsResult Validate(string? name, KvEngineCacheOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var failures = new List<string>();
        if (string.IsNullOrWhiteSpace(options.Path))
        {
            failures.Add($"{nameof(KvEngineCacheOptions)}.{nameof(KvEngineCacheOptions.Path)} is required: the directory of the cache's database.");
        }
        else if (options.Path.AsSpan().IndexOfAny(System.IO.Path.GetInvalidPathChars()) >= 0)
        {
            failures.Add($"{nameof(KvEngineCacheOptions)}.{nameof(KvEngineCacheOptions.Path)} '{options.Path}' contains characters not allowed in a path.");
        }
        if (!Enum.IsDefined(options.Compression))
        {
            failures.Add($"{nameof(KvEngineCacheOptions)}.{nameof(KvEngineCacheOptions.Compression)} {(int)options.Compression} is not a KvCompressionType.");
        }
        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}
