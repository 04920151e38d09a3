using System.Diagnostics;
using System.Reflection;

namespace KvEngine.Diagnostics;

/// <summary>
/// The engine's trace spans, on the <see cref="ActivitySource"/> named
/// <see cref="KvEngineDiagnostics.ActivitySourceName"/> ("KvEngine"): one per open, flush,
/// compaction, ingestion and checkpoint, never per Get or Put. With no listener
/// (<see cref="ActivitySource.HasListeners"/> false) <see cref="Start"/> returns null and costs one
/// check; every other member accepts the null. Each span carries <c>db.namespace</c> (the database
/// directory) and, on failure, an Error status with the exception as an event. Thread-safe (the
/// source is shared; each span belongs to the thread that started it).
/// </summary>
internal static class DbActivities
{
    public const string Open = "kvengine.open";
    public const string Flush = "kvengine.flush";
    public const string Compaction = "kvengine.compaction";
    public const string Ingest = "kvengine.ingest";
    public const string Checkpoint = "kvengine.checkpoint";

    /// <summary>The engine's activity source, versioned like the assembly.</summary>
    public static readonly ActivitySource Source = new(
        KvEngineDiagnostics.ActivitySourceName,
        typeof(DbActivities).Assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion);

    /// <summary>Starts span <paramref name="name"/> for the database at <paramref name="dir"/>; null when nobody listens.</summary>
    public static Activity? Start(string name, string dir)
    {
        if (!Source.HasListeners())
        {
            return null;
        }
        Activity? activity = Source.StartActivity(name, ActivityKind.Internal);
        activity?.SetTag(KvEngineDiagnostics.DbNamespaceTag, dir);
        return activity;
    }

    /// <summary>Marks <paramref name="activity"/> failed with <paramref name="error"/> (OpenTelemetry's exception event).</summary>
    public static void Failed(Activity? activity, Exception error)
    {
        if (activity == null)
        {
            return;
        }
        activity.SetStatus(ActivityStatusCode.Error, error.Message);
        activity.AddException(error);
    }
}
