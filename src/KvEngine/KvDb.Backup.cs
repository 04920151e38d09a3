using KvEngine.Db;
using KvEngine.Versions;

namespace KvEngine;

/// <summary>
/// Checkpoints, backups and read-only opens (RocksDB's Checkpoint, GetLiveFiles,
/// GetSortedWalFiles, DisableFileDeletions / EnableFileDeletions and OpenForReadOnly); see
/// docs/design.md, "Checkpoints and backups". Thread-safe like the rest of <see cref="KvDb"/>.
/// </summary>
public sealed partial class KvDb
{
    /// <summary>
    /// Opens the database at <paramref name="path"/> read-only (RocksDB's DB::OpenForReadOnly), with
    /// the default family only. It takes no LOCK, so it may run beside a writer; it recovers the
    /// MANIFEST and replays the WALs into memory and writes nothing (no WAL, MANIFEST, OPTIONS file
    /// or table; no file is deleted). Reads, iterators, snapshots and properties work; writes,
    /// flushes, compactions and family changes throw <see cref="NotSupportedException"/>. It sees the
    /// database as it was when opened. Beside a writer, a table the writer deletes later (after a
    /// compaction) can no longer be read, as in RocksDB: the supported uses are a checkpoint
    /// (<see cref="CreateCheckpoint"/>) or a database whose writer is idle.
    /// With <paramref name="errorIfWalFileExists"/> a directory holding any WAL file is refused.
    /// </summary>
    /// <exception cref="KvException">The database does not exist, or a WAL exists with <paramref name="errorIfWalFileExists"/>.</exception>
    /// <exception cref="KvCorruptionException">Its files are damaged beyond what the recovery mode tolerates.</exception>
    public static KvDb OpenReadOnly(string path, KvOptions? options = null, bool errorIfWalFileExists = false) =>
        new(DbImpl.OpenReadOnly(path, options ?? new KvOptions(), null, errorIfWalFileExists));

    /// <summary>
    /// <see cref="OpenReadOnly(string, KvOptions, bool)"/> with column families: unlike
    /// <see cref="Open(string, KvOptions, IEnumerable{ColumnFamilyDescriptor})"/> a subset of the
    /// database's families may be named (as RocksDB allows read-only), but "default" must be among
    /// them (RocksDB: "Default column family not specified"); a named family it lacks is an error.
    /// </summary>
    /// <exception cref="ArgumentException">"default" is not named, or a named family does not exist, or is named twice.</exception>
    /// <exception cref="KvException">The database does not exist, or a WAL exists with <paramref name="errorIfWalFileExists"/>.</exception>
    /// <exception cref="KvCorruptionException">Its files are damaged beyond what the recovery mode tolerates.</exception>
    public static KvDb OpenReadOnly(string path, KvOptions options, IEnumerable<ColumnFamilyDescriptor> columnFamilies, bool errorIfWalFileExists = false)
    {
        ArgumentNullException.ThrowIfNull(columnFamilies);
        return new(DbImpl.OpenReadOnly(path, options, columnFamilies, errorIfWalFileExists));
    }

    /// <summary>True when opened by <see cref="OpenReadOnly(string, KvOptions, bool)"/>: every write throws <see cref="KvReadOnlyException"/>.</summary>
    public bool IsReadOnly => _impl.IsReadOnly;

    /// <summary>
    /// Creates an openable copy of the database in <paramref name="directory"/>, which must not
    /// exist (RocksDB's Checkpoint::CreateCheckpoint): tables and the OPTIONS file are hard-linked
    /// (copied when links are impossible, e.g. another device), the MANIFEST and the WAL being
    /// written are copied up to the moment of capture, CURRENT is written, everything synced; the
    /// files are assembled in "<paramref name="directory"/>.tmp" and renamed into place, so a
    /// checkpoint directory is either complete or absent. Every family is flushed first when
    /// <paramref name="logSizeForFlush"/> is 0 (the default); with a larger value only when the
    /// live WALs hold at least that many bytes (ulong.MaxValue: never; the WALs are copied
    /// instead). Writes may go on meanwhile: the checkpoint holds every write acknowledged before
    /// the call and a prefix of those made during it. It opens with <see cref="Open(string, KvOptions)"/>,
    /// <see cref="OpenReadOnly(string, KvOptions, bool)"/> or RocksDB's tools.
    /// </summary>
    /// <exception cref="ArgumentException"><paramref name="directory"/> exists.</exception>
    /// <exception cref="KvException">An I/O error (the partial checkpoint is removed).</exception>
    /// <exception cref="KvReadOnlyException">The database was opened read-only.</exception>
    public void CreateCheckpoint(string directory, ulong logSizeForFlush = 0) => _impl.CreateCheckpoint(directory, logSizeForFlush);

    /// <summary>
    /// The files a backup must copy (RocksDB's GetLiveFiles): names relative to <see cref="Path"/>
    /// with a leading '/' — every live table ("/000012.sst"), "/CURRENT", the MANIFEST
    /// ("/MANIFEST-000005") and the OPTIONS file ("/OPTIONS-000007") — and in
    /// <paramref name="manifestFileSize"/> how many bytes of the MANIFEST to copy. With
    /// <paramref name="flushMemtable"/> every family is flushed first, so the tables hold every
    /// write. Call <see cref="DisableFileDeletions"/> first so the files stay while they are copied,
    /// and copy the WALs of <see cref="GetSortedWalFiles"/> (listed after this call) as well, each
    /// up to its listed size: KvEngine's MANIFEST records the WALs it creates and an open refuses a
    /// database whose recorded WAL is missing (<see cref="CreateCheckpoint"/> does all of this).
    /// </summary>
    /// <exception cref="KvReadOnlyException"><paramref name="flushMemtable"/> on a read-only database.</exception>
    public IReadOnlyList<string> GetLiveFiles(out ulong manifestFileSize, bool flushMemtable = true) =>
        _impl.GetLiveFiles(flushMemtable, out manifestFileSize);

    /// <summary>
    /// The WAL files in the database directory, oldest first (RocksDB's GetSortedWalFiles): those
    /// holding writes not yet in tables, the one being written, and any older one not yet deleted
    /// (with file deletions disabled, every WAL a backup's MANIFEST may still name).
    /// </summary>
    public IReadOnlyList<WalFileInfo> GetSortedWalFiles()
    {
        List<(ulong Number, ulong StartSequence, long Size)> wals = _impl.GetSortedWalFiles();
        return wals.ConvertAll(static w => new WalFileInfo("/" + System.IO.Path.GetFileName(FileNames.LogFile("", w.Number)), w.Number, w.StartSequence, w.Size));
    }

    /// <summary>
    /// Stops the deletion of obsolete files (tables, WALs, MANIFESTs, OPTIONS files) so that a backup
    /// can copy the live files (RocksDB's DisableFileDeletions). Calls count: deletions resume only
    /// when <see cref="EnableFileDeletions"/> brings the count back to zero. Returns once no deletion
    /// is in progress.
    /// </summary>
    /// <exception cref="KvReadOnlyException">The database was opened read-only.</exception>
    public void DisableFileDeletions() => _impl.DisableFileDeletions();

    /// <summary>
    /// Undoes <see cref="DisableFileDeletions"/> (RocksDB 7.8's EnableFileDeletions):
    /// <paramref name="force"/> (the default, as in RocksDB 7.8) resets the count to zero, otherwise
    /// it goes down by one. Once at zero, the files that became obsolete meanwhile are deleted
    /// before this returns.
    /// </summary>
    /// <exception cref="KvReadOnlyException">The database was opened read-only.</exception>
    public void EnableFileDeletions(bool force = true) => _impl.EnableFileDeletions(force);
}
