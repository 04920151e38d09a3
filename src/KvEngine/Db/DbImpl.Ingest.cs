using KvEngine.Db.State;
using KvEngine.Diagnostics;

namespace KvEngine.Db;

/// <summary>IngestExternalFile dispatch: the checks of the database's state, then <see cref="Ingestion.ExternalFileIngester"/>.</summary>
internal sealed partial class DbImpl
{
    public void IngestExternalFile(ColumnFamilyData cfd, IReadOnlyList<string> paths, IngestExternalFileOptions options)
    {
        using CallScope call = EnterCall();
        ThrowIfReadOnly("IngestExternalFile");
        using System.Diagnostics.Activity? activity = DbActivities.Start(DbActivities.Ingest, _dir);
        if (activity != null)
        {
            activity.SetTag("kvengine.column_family", cfd.Name);
            activity.SetTag("kvengine.ingest.files", paths.Count);
            activity.SetTag("kvengine.ingest.move_files", options.MoveFiles);
        }
        try
        {
            _ingester.Ingest(cfd, paths, options);
        }
        catch (Exception e)
        {
            DbActivities.Failed(activity, e);
            throw;
        }
    }
}
