using System.Globalization;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;

namespace KvEngine.Extensions.Caching;

/// <summary>
/// The health of the KvEngine databases registered in the container (the
/// <see cref="KvEngineCache"/>'s and the <see cref="KvDb"/> of AddKvDb): Unhealthy when one is not
/// open or refuses writes after a background error (property "kvengine.background-error"; writes
/// come back after <see cref="KvDb.Resume"/> or an automatic resume), Degraded while writes are
/// slowed or stopped by level-0 files at Level0SlowdownWritesTrigger (auto compactions on) or by a
/// full memtable with every other memtable waiting for a flush, Healthy otherwise. Reads
/// properties only: no write, no wait. Thread-safe.
/// </summary>
internal sealed class KvEngineHealthCheck(IServiceProvider services) : IHealthCheck
{
    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
    {
        var data = new Dictionary<string, object>();
        HealthCheckResult? worst = null;
        bool any = false;
        if (services.GetService<KvEngineCache>() is { } cache)
        {
            any = true;
            worst = Worse(worst, Evaluate("cache " + cache.FullPath, cache.OpenedDatabase, cache.DatabaseOptions, data));
        }
        if (services.GetService<KvDbLifetime>() is { } lifetime)
        {
            any = true;
            worst = Worse(worst, Evaluate("database", lifetime.Opened, lifetime.Options, data));
        }
        if (!any)
        {
            return Task.FromResult(new HealthCheckResult(context.Registration.FailureStatus,
                "No KvEngine database is registered (AddKvEngineCache or AddKvDb)."));
        }
        HealthCheckResult result = worst!.Value;
        if (result.Status == HealthStatus.Unhealthy)
        {
            result = new HealthCheckResult(context.Registration.FailureStatus, result.Description, result.Exception, data);
        }
        else
        {
            result = new HealthCheckResult(result.Status, result.Description, result.Exception, data);
        }
        return Task.FromResult(result);
    }

    /// <summary>The health of one database, named <paramref name="what"/>; its figures go to <paramref name="data"/>.</summary>
    internal static HealthCheckResult Evaluate(string what, KvDb? db, KvOptions? options, Dictionary<string, object> data)
    {
        if (db == null || options == null)
        {
            return HealthCheckResult.Unhealthy($"KvEngine {what} is not open (the host has not started, the open failed, or it has stopped).");
        }
        string? error;
        long level0;
        long immutable;
        long activeBytes;
        try
        {
            error = db.GetProperty("kvengine.background-error");
            level0 = Number(db.GetProperty("rocksdb.num-files-at-level0"));
            immutable = Number(db.GetProperty("rocksdb.num-immutable-mem-table"));
            activeBytes = Number(db.GetProperty("rocksdb.cur-size-active-mem-table"));
        }
        catch (ObjectDisposedException e)
        {
            return HealthCheckResult.Unhealthy($"KvEngine {what} is closed.", e);
        }
        data[what + " level0 files"] = level0;
        data[what + " immutable memtables"] = immutable;
        if (!string.IsNullOrEmpty(error))
        {
            data[what + " background error"] = error;
            return HealthCheckResult.Unhealthy($"KvEngine {what} refuses writes after a background error: {error}");
        }
        if (!options.DisableAutoCompactions && level0 >= options.Level0SlowdownWritesTrigger)
        {
            string how = level0 >= options.Level0StopWritesTrigger ? "stopped" : "slowed";
            return HealthCheckResult.Degraded(
                $"KvEngine {what}: writes are {how} by {level0} level-0 files (slowdown at {options.Level0SlowdownWritesTrigger}, stop at {options.Level0StopWritesTrigger}) until compaction catches up.");
        }
        if (immutable >= options.MaxWriteBufferNumber - 1 && activeBytes >= options.WriteBufferSize)
        {
            return HealthCheckResult.Degraded(
                $"KvEngine {what}: writes wait for a flush ({immutable} memtables waiting, MaxWriteBufferNumber {options.MaxWriteBufferNumber}).");
        }
        return HealthCheckResult.Healthy($"KvEngine {what} accepts writes.");
    }

    private static long Number(string? property) =>
        long.TryParse(property, NumberStyles.None, CultureInfo.InvariantCulture, out long n) ? n : 0;

    private static HealthCheckResult Worse(HealthCheckResult? a, HealthCheckResult b) =>
        a is { } x && x.Status <= b.Status ? x : b;
}
