using KvEngine.Db.Recovery;
using KvEngine.Db.State;
using KvEngine.Versions;

namespace KvEngine.Db;

/// <summary>
/// Read-only open (RocksDB's DB::OpenForReadOnly): recovers the MANIFEST and replays the WALs into
/// memtables in memory only. It takes no LOCK, so it may run beside a writer, and writes nothing:
/// no WAL, MANIFEST, OPTIONS file or table is created and no file is deleted (no background work
/// runs). Every operation that would write throws <see cref="KvReadOnlyException"/> (RocksDB's
/// Status::NotSupported). Invariant: <see cref="_readOnly"/> is set before recovery and never changes.
/// <para>
/// Beside a writer the instance sees the database as it was when opened; it does not follow the
/// writer. As in RocksDB, nothing stops the writer from deleting a table this instance will read
/// later (after a compaction): a read of it then fails with an I/O error. The supported uses are a
/// checkpoint, or a database whose writer is quiescent (no flush or compaction running).
/// </para>
/// </summary>
internal sealed partial class DbImpl
{
    private bool _readOnly;

    /// <summary>True for an instance opened by <see cref="OpenReadOnly"/>.</summary>
    internal bool IsReadOnly => _readOnly;

    /// <summary>
    /// Opens the database at <paramref name="path"/> read-only with the families
    /// <paramref name="families"/> names (null: default only); unlike a read-write open a subset of
    /// the families may be named. <paramref name="errorIfWalFileExists"/> refuses a directory
    /// holding any WAL (RocksDB's error_if_wal_file_exists).
    /// </summary>
    public static DbImpl OpenReadOnly(string path, KvOptions options, IEnumerable<ColumnFamilyDescriptor>? families, bool errorIfWalFileExists)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        ArgumentNullException.ThrowIfNull(options);
        options = options.Clone();
        List<ColumnFamilyDescriptor> requested = ParseDescriptors(options, families);
        string dir = Path.GetFullPath(path);
        if (!options.FileSystem.FileExists(FileNames.CurrentFile(dir)))
        {
            throw new KvException($"Database '{dir}' does not exist (no CURRENT file); a read-only open cannot create it.", KvStatusCode.InvalidArgument, KvStatusSubCode.None, null);
        }
        CheckDirectIO(dir, options, FileNames.CurrentFile(dir));
        DbImpl? db = null;
        try
        {
            db = new DbImpl(dir, options, NoLock.Instance);
            db._readOnly = true;
            db.RecoverReadOnly(requested, errorIfWalFileExists);
            return db;
        }
        catch (Exception e)
        {
            db?.Dispose();
            if (e is IOException or UnauthorizedAccessException)
            {
                throw new KvException($"Opening database '{dir}' read-only failed: {e.Message}", e);
            }
            throw;
        }
    }

    private void RecoverReadOnly(List<ColumnFamilyDescriptor> requested, bool errorIfWalFileExists)
    {
        var recovery = new DbRecovery(_dir, _options, _versions, _families, NewFamilyData, flusher: null);
        recovery.RecoverReadOnly(requested, errorIfWalFileExists);
        _versions.SetLastSequence(recovery.MaxSequence);
        _writer.Thread.InitializeSequences(recovery.MaxSequence);
        using (_mutex.Lock())
        {
            foreach (ColumnFamilyData cfd in _families.Live())
            {
                cfd.Level0Reads.Disable(); // nothing compacts here: reads charge nothing
                cfd.InstallReadState();
            }
        }
    }

    /// <summary>Throws <see cref="KvReadOnlyException"/> for <paramref name="operation"/> on a read-only instance.</summary>
    internal void ThrowIfReadOnly(string operation)
    {
        if (_readOnly)
        {
            throw new KvReadOnlyException($"{operation} is not supported: database '{_dir}' was opened read-only (KvDb.OpenReadOnly).");
        }
    }

    /// <summary>A read-only instance holds no LOCK.</summary>
    private sealed class NoLock : IDisposable
    {
        public static readonly NoLock Instance = new();

        public void Dispose()
        {
        }
    }
}
