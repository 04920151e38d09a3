using System.Buffers;
using System.Diagnostics.CodeAnalysis;
using System.IO.Pipelines;
using System.Globalization;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Options;

namespace KvEngine.CacheService;

/// <summary>
/// The /cache/{key} handlers. Values are raw bytes in both directions; with an
/// <see cref="IBufferDistributedCache"/> (KvEngineCache, RedisCache) the body goes from the
/// request pipe to the cache and from the cache to the response pipe with no array per request.
/// TTL: "?ttl=" seconds (or the X-Cache-TTL header), an absolute expiration from now. Stateless
/// and thread-safe.
/// </summary>
internal static class CacheEndpoints
{
    public const string TtlHeader = "X-Cache-TTL";

    public static async Task<IResult> PutAsync(string key, HttpRequest request, IDistributedCache cache,
        IOptions<CacheServiceOptions> options, CacheServiceMetrics metrics, CancellationToken cancellationToken)
    {
        if (!TryParseTtl(request, out DistributedCacheEntryOptions? entryOptions, out string? error))
        {
            metrics.Request("put", "rejected");
            return Results.Problem(error, statusCode: StatusCodes.Status400BadRequest);
        }
        int max = options.Value.MaxValueBytes;
        if (request.ContentLength > max)
        {
            metrics.Request("put", "rejected");
            return TooLarge(max);
        }
        PipeReader reader = request.BodyReader;
        while (true)
        {
            ReadResult read = await reader.ReadAsync(cancellationToken);
            ReadOnlySequence<byte> body = read.Buffer;
            if (body.Length > max)
            {
                reader.AdvanceTo(body.End);
                metrics.Request("put", "rejected");
                return TooLarge(max);
            }
            if (read.IsCompleted)
            {
                try
                {
                    if (cache is IBufferDistributedCache buffered)
                    {
                        await buffered.SetAsync(key, body, entryOptions, cancellationToken);
                    }
                    else
                    {
                        await cache.SetAsync(key, body.ToArray(), entryOptions, cancellationToken);
                    }
                }
                finally
                {
                    reader.AdvanceTo(body.End);
                }
                metrics.Request("put", "stored");
                metrics.Value("put", body.Length);
                return Results.NoContent();
            }
            reader.AdvanceTo(body.Start, body.End); // need the whole body
        }
    }

    public static async Task GetAsync(string key, HttpContext context, IDistributedCache cache, CacheServiceMetrics metrics,
        CancellationToken cancellationToken)
    {
        HttpResponse response = context.Response;
        if (cache is IBufferDistributedCache buffered)
        {
            response.ContentType = "application/octet-stream";
            // Written into the response pipe; nothing is sent before it returns, so a miss can still be a 404.
            PipeWriter body = response.BodyWriter;
            long before = body.CanGetUnflushedBytes ? body.UnflushedBytes : -1;
            if (!await buffered.TryGetAsync(key, body, cancellationToken))
            {
                response.ContentType = null;
                response.StatusCode = StatusCodes.Status404NotFound;
                metrics.Request("get", "miss");
                return;
            }
            metrics.Request("get", "hit");
            if (before >= 0)
            {
                metrics.Value("get", body.UnflushedBytes - before);
            }
            return;
        }
        byte[]? value = await cache.GetAsync(key, cancellationToken);
        if (value == null)
        {
            response.StatusCode = StatusCodes.Status404NotFound;
            metrics.Request("get", "miss");
            return;
        }
        metrics.Request("get", "hit");
        metrics.Value("get", value.Length);
        response.ContentType = "application/octet-stream";
        response.ContentLength = value.Length;
        await response.Body.WriteAsync(value, cancellationToken);
    }

    public static async Task<IResult> DeleteAsync(string key, IDistributedCache cache, CacheServiceMetrics metrics,
        CancellationToken cancellationToken)
    {
        await cache.RemoveAsync(key, cancellationToken);
        metrics.Request("delete", "removed");
        return Results.NoContent();
    }

    private static IResult TooLarge(int max) =>
        Results.Problem($"The value is larger than CacheService:MaxValueBytes ({max}).", statusCode: StatusCodes.Status413PayloadTooLarge);

    internal static bool TryParseTtl(HttpRequest request, [NotNullWhen(true)] out DistributedCacheEntryOptions? options, [NotNullWhen(false)] out string? error)
    {
        options = null;
        error = null;
        string? text = request.Query.TryGetValue("ttl", out var q) ? q.ToString()
            : request.Headers.TryGetValue(TtlHeader, out var h) ? h.ToString() : null;
        if (text == null)
        {
            options = new DistributedCacheEntryOptions();
            return true;
        }
        if (!long.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out long seconds) || seconds <= 0
            || seconds > (long)TimeSpan.MaxValue.TotalSeconds / 2)
        {
            error = $"ttl must be a positive whole number of seconds, not '{text}'.";
            return false;
        }
        options = new DistributedCacheEntryOptions { AbsoluteExpirationRelativeToNow = TimeSpan.FromSeconds(seconds) };
        return true;
    }
}
