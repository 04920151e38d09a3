using System.Diagnostics;

namespace KvEngine.Replication.Diagnostics;

/// <summary>
/// The replication layer's trace spans, on an <see cref="ActivitySource"/> of the engine's name
/// (<see cref="KvEngineDiagnostics.ActivitySourceName"/>, "KvEngine"), so that one
/// <c>AddSource("KvEngine")</c> collects them with the engine's: <see cref="SnapshotInstall"/>,
/// a follower installing a Raft snapshot received from the leader. Null when nobody listens.
/// Thread-safe.
/// </summary>
internal static class ReplicationActivities
{
    public const string SnapshotInstall = "kvengine.raft.snapshot_install";

    public static readonly ActivitySource Source = new(KvEngineDiagnostics.ActivitySourceName);

    /// <summary>Starts span <paramref name="name"/> for the node at <paramref name="directory"/>; null when nobody listens.</summary>
    public static Activity? Start(string name, string directory)
    {
        if (!Source.HasListeners())
        {
            return null;
        }
        Activity? activity = Source.StartActivity(name, ActivityKind.Internal);
        activity?.SetTag(KvEngineDiagnostics.DbNamespaceTag, directory);
        return activity;
    }

    /// <summary>Marks <paramref name="activity"/> failed with <paramref name="error"/>.</summary>
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
