using KvEngine.Db.State;

namespace KvEngine.Db;

/// <summary>IngestExternalFile dispatch: the checks of the database's state, then <see cref="Ingestion.ExternalFileIngester"/>.</summary>
internal sealed partial class DbImpl
{
    public void IngestExternalFile(ColumnFamilyData cfd, IReadOnlyList<string> paths, IngestExternalFileOptions options)
    {
        using CallScope call = EnterCall();
        ThrowIfReadOnly("IngestExternalFile");
        _ingester.Ingest(cfd, paths, options);
    }
}
