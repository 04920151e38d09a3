namespace KvEngine.Db.Checkpoints;

/// <summary>
/// The files a consistent copy of a database needs, captured at one moment (RocksDB's
/// GetLiveFilesStorageInfo): the tables of every live (not dropped) family's current version, the
/// MANIFEST with the size it had then (a copy takes exactly that many bytes: the records after it
/// may name tables not in <see cref="Tables"/>), the newest OPTIONS file, and the WALs at or above
/// <see cref="MinLogNumberToKeep"/>, the last with the size it had at a record boundary.
/// Invariants: every table of the MANIFEST's first <see cref="ManifestSize"/> bytes that a live
/// family still uses is in <see cref="Tables"/>; the WALs are ascending and the last one is the WAL
/// being written when they were captured. Immutable once built; the files exist only as long as
/// file deletions stay disabled (<see cref="DbImpl.DisableFileDeletions"/>).
/// </summary>
internal sealed class LiveFileSet
{
    public LiveFileSet(List<(ulong Number, ulong Size)> tables, ulong manifestNumber, ulong manifestSize, ulong minLogNumberToKeep)
    {
        Tables = tables;
        ManifestNumber = manifestNumber;
        ManifestSize = manifestSize;
        MinLogNumberToKeep = minLogNumberToKeep;
    }

    /// <summary>Table file numbers and sizes, ascending by number, each once.</summary>
    public List<(ulong Number, ulong Size)> Tables { get; }

    public ulong ManifestNumber { get; }

    /// <summary>The MANIFEST's size when the tables were captured (all of it synced).</summary>
    public ulong ManifestSize { get; }

    /// <summary>WALs below this number hold nothing the captured MANIFEST still needs.</summary>
    public ulong MinLogNumberToKeep { get; }

    /// <summary>The newest OPTIONS file's number, 0 when there is none.</summary>
    public ulong OptionsNumber { get; set; }

    /// <summary>The live WALs, ascending, with their sizes (the last one's at a record boundary).</summary>
    public List<(ulong Number, long Size)> Wals { get; } = new();
}
