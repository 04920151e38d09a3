using System.Text;
using KvEngine.Extensions.Caching;
using KvEngine.Replication;
using Microsoft.Extensions.Options;

namespace KvEngine.CacheService.Cluster;

/// <summary>
/// The /cache/{key} handlers of <c>--cluster</c> mode and /cluster. Writes (PUT, DELETE) are
/// replicated through the leader and answered once committed by a majority; a follower answers
/// them with <c>307 Temporary Redirect</c> to the same path on the leader's HTTP URL (503 while no
/// leader is known). GET is linearizable by default (the leader confirms its leadership with a
/// read barrier; a follower redirects to it); <c>?consistency=stale</c> (or the header
/// <c>X-Cache-Consistency: stale</c>) reads the local node at once. A linearizable GET whose
/// barrier finds the leadership gone (a leader paused, then resumed after the others elected a
/// successor; no majority reachable) is redirected the same way, never answered 500. A write interrupted by a
/// leadership change after it was appended answers 503 with <c>X-Write-Outcome: unknown</c>. Stateless and thread-safe.
/// </summary>
internal static class ClusterEndpoints
{
    public const string ConsistencyHeader = "X-Cache-Consistency";

    /// <summary>Set to "unknown" on a 503 for a write that may still commit.</summary>
    public const string OutcomeHeader = "X-Write-Outcome";

    public static async Task<IResult> PutAsync(string key, HttpContext context, ClusterNode cluster, IOptions<CacheServiceOptions> options,
        TimeProvider time, CacheServiceMetrics metrics, CancellationToken cancellationToken)
    {
        if (!CacheEndpoints.TryParseTtl(context.Request, out var entryOptions, out string? error))
        {
            metrics.Request("put", "rejected");
            return Results.Problem(error, statusCode: StatusCodes.Status400BadRequest);
        }
        if (RedirectUnlessLeader(context, cluster, out ReplicatedKvNode? node) is { } redirect)
        {
            return redirect;
        }
        int max = options.Value.MaxValueBytes;
        if (context.Request.ContentLength > max)
        {
            metrics.Request("put", "rejected");
            return Results.Problem($"The value is larger than CacheService:MaxValueBytes ({max}).", statusCode: StatusCodes.Status413PayloadTooLarge);
        }
        using var body = new MemoryStream();
        byte[] header = new byte[CacheEntryFormat.HeaderSize];
        long expiresAt = entryOptions.AbsoluteExpirationRelativeToNow is { } ttl ? time.GetUtcNow().Add(ttl).UtcTicks : long.MaxValue;
        ClusterCacheEntry.WriteHeader(header, expiresAt);
        body.Write(header);
        byte[] chunk = new byte[16 * 1024];
        int read;
        while ((read = await context.Request.Body.ReadAsync(chunk, cancellationToken)) > 0)
        {
            if (body.Length - header.Length + read > max)
            {
                metrics.Request("put", "rejected");
                return Results.Problem($"The value is larger than CacheService:MaxValueBytes ({max}).", statusCode: StatusCodes.Status413PayloadTooLarge);
            }
            body.Write(chunk, 0, read);
        }
        using var batch = new WriteBatch();
        batch.Put(Encoding.UTF8.GetBytes(key), body.GetBuffer().AsSpan(0, (int)body.Length));
        if (await ReplicateAsync(context, cluster, node!, batch, cancellationToken) is { } failed)
        {
            return failed;
        }
        metrics.Request("put", "stored");
        metrics.Value("put", body.Length - header.Length);
        return Results.NoContent();
    }

    public static async Task<IResult> DeleteAsync(string key, HttpContext context, ClusterNode cluster, CacheServiceMetrics metrics,
        CancellationToken cancellationToken)
    {
        if (RedirectUnlessLeader(context, cluster, out ReplicatedKvNode? node) is { } redirect)
        {
            return redirect;
        }
        using var batch = new WriteBatch();
        batch.Delete(Encoding.UTF8.GetBytes(key));
        if (await ReplicateAsync(context, cluster, node!, batch, cancellationToken) is { } failed)
        {
            return failed;
        }
        metrics.Request("delete", "removed");
        return Results.NoContent();
    }

    public static async Task<IResult> GetAsync(string key, HttpContext context, ClusterNode cluster, TimeProvider time,
        CacheServiceMetrics metrics, CancellationToken cancellationToken)
    {
        bool stale = string.Equals(context.Request.Query["consistency"], "stale", StringComparison.OrdinalIgnoreCase)
            || string.Equals(context.Request.Headers[ConsistencyHeader], "stale", StringComparison.OrdinalIgnoreCase);
        ReplicatedKvNode? node;
        if (stale)
        {
            node = cluster.Node;
            if (node is null)
            {
                return Results.Problem("The cluster node is not running.", statusCode: StatusCodes.Status503ServiceUnavailable);
            }
        }
        else
        {
            if (RedirectUnlessLeader(context, cluster, out node) is { } redirect)
            {
                return redirect;
            }
            try
            {
                await node!.ApplyReadBarrierAsync(cancellationToken);
            }
            catch (KvNotLeaderException e)
            {
                // Leadership moved before or during the barrier (every DotNext leadership or
                // membership error arrives as this): 307 to the leader, 503 while none is ready.
                return RedirectToLeader(context, cluster, e.LeaderEndPoint);
            }
        }
        byte[]? stored = node!.Read(Encoding.UTF8.GetBytes(key), static (db, k) => db.Get(k));
        if (stored is null || !ClusterCacheEntry.TryGetLiveValue(stored, time.GetUtcNow(), out ReadOnlyMemory<byte> value))
        {
            metrics.Request("get", "miss");
            return Results.NotFound();
        }
        metrics.Request("get", "hit");
        metrics.Value("get", value.Length);
        return Results.Bytes(value, "application/octet-stream");
    }

    /// <summary>GET /cluster: this node's role, term, commit and applied index, and the leader.</summary>
    public static IResult Status(ClusterNode cluster)
    {
        if (cluster.Node is not { } node)
        {
            return Results.Problem("The cluster node is not running.", statusCode: StatusCodes.Status503ServiceUnavailable);
        }
        ReplicationStatus status = node.GetStatus();
        return Results.Json(new ClusterStatusResponse(
            status.Role.ToString(),
            status.Term,
            status.CommitIndex,
            status.AppliedIndex,
            status.SnapshotIndex,
            status.LocalEndPoint.ToString() ?? "",
            status.LeaderEndPoint?.ToString(),
            cluster.Options.HttpUrlOf(status.LeaderEndPoint)?.ToString()));
    }

    private static IResult? RedirectUnlessLeader(HttpContext context, ClusterNode cluster, out ReplicatedKvNode? node)
    {
        node = cluster.Node;
        if (node is null)
        {
            return Results.Problem("The cluster node is not running.", statusCode: StatusCodes.Status503ServiceUnavailable);
        }
        return node.IsLeader ? null : RedirectToLeader(context, cluster, node.LeaderEndPoint);
    }

    private static IResult RedirectToLeader(HttpContext context, ClusterNode cluster, System.Net.EndPoint? leader)
    {
        // A leader just elected names itself before its first entry commits: not a place to send the
        // client back to.
        if (cluster.Options.HttpUrlOf(leader) is not { } leaderUrl || Equals(leader, cluster.Node?.LocalEndPoint))
        {
            context.Response.Headers.RetryAfter = "1";
            return Results.Problem("No leader is ready (an election is running, a new leader has not committed its first entry, or no majority is reachable); retry shortly.",
                statusCode: StatusCodes.Status503ServiceUnavailable);
        }
        var target = new Uri(leaderUrl, context.Request.Path + context.Request.QueryString);
        return Results.Redirect(target.ToString(), permanent: false, preserveMethod: true);
    }

    /// <summary>Replicates <paramref name="batch"/>; null when acknowledged, else the answer to send.</summary>
    private static async Task<IResult?> ReplicateAsync(HttpContext context, ClusterNode cluster, ReplicatedKvNode node, WriteBatch batch,
        CancellationToken cancellationToken)
    {
        try
        {
            await node.WriteAsync(batch, cancellationToken);
            return null;
        }
        catch (KvNotLeaderException e) when (e.InnerException is null)
        {
            // Refused before it was appended (leadership moved just before): redirect, nothing was written.
            return RedirectToLeader(context, cluster, e.LeaderEndPoint);
        }
        catch (KvNotLeaderException)
        {
            // Leadership moved while the write was being replicated: it may still commit. Say so
            // rather than redirect, so a client does not apply it twice unknowingly (PUT and DELETE
            // are idempotent: retrying is safe when no other writer touches the key meanwhile).
            context.Response.Headers[OutcomeHeader] = "unknown";
            return Results.Problem("Leadership changed while the write was replicated: it may or may not have been applied; retry at the leader.",
                statusCode: StatusCodes.Status503ServiceUnavailable);
        }
    }
}
