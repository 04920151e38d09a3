using KvEngine.Storage;
using KvEngine.Versions;

namespace KvEngine.Db.Checkpoints;

/// <summary>
/// Checkpoints (RocksDB 7.8's Checkpoint::CreateCheckpoint, utilities/checkpoint/checkpoint_impl.cc):
/// an openable copy of the database in another directory, made of hard links where possible.
/// <code>
/// 1. dir must not exist; staging = dir + ".tmp" (a leftover one is emptied and removed), created
/// 2. DisableFileDeletions
/// 3. flush every family (atomically with AtomicFlush) unless logSizeForFlush says otherwise:
///    0 always; ulong.MaxValue never; else when the live WALs hold at least that many bytes
/// 4. capture (LiveFileSet): tables of every live family, MANIFEST number and size, OPTIONS, the
///    WALs at or above MinLogNumberToKeep, the last with its size at a record boundary
/// 5. tables, OPTIONS, older WALs: hard link (after the first failed link: copy, synced);
///    MANIFEST and the last WAL: copy exactly the captured size, synced; CURRENT: written, synced
/// 6. EnableFileDeletions(force: false)
/// 7. sync staging, rename staging -> dir, sync dir and its parent; on failure remove staging
///    (or dir, when only its sync failed)
/// </code>
/// The checkpoint holds a prefix of the database's history: the MANIFEST up to the capture names
/// only tables that exist (deletions are off) and the WALs from MinLogNumberToKeep hold every
/// write after the tables' data, up to a record boundary. Writes may go on meanwhile.
/// <para>
/// Like RocksDB's CheckpointImpl it drives the database only through its operations
/// (Disable/EnableFileDeletions, Flush, the live-file capture), never its fields. Thread-safety:
/// checkpoints may run concurrently from several threads, except two into one directory, which
/// the process-wide set of staging directories in use (per file system) refuses.
/// </para>
/// </summary>
internal sealed class Checkpointer
{
    /// <summary>
    /// Staging directories of the checkpoints running in this process, per file system (two
    /// in-memory file systems may use the same path; guarded by itself).
    /// </summary>
    private static readonly HashSet<(IFileSystem Fs, string Path)> s_stagingInUse = new();

    private readonly ICheckpointSource _db;
    private readonly string _dir;
    private readonly IFileSystem _fs;

    /// <param name="db">The database to copy: its file-deletion control, flush and live-file capture.</param>
    /// <param name="fs">Its file system.</param>
    public Checkpointer(ICheckpointSource db, IFileSystem fs)
    {
        _db = db;
        _dir = db.Directory;
        _fs = fs;
    }

    /// <summary>Creates a checkpoint of the database in <paramref name="directory"/> (see the type comment).</summary>
    public void CreateCheckpoint(string directory, ulong logSizeForFlush)
    {
        ArgumentException.ThrowIfNullOrEmpty(directory);
        string dir = Path.TrimEndingDirectorySeparator(Path.GetFullPath(directory));
        if (_fs.DirectoryExists(dir) || _fs.FileExists(dir))
        {
            throw new ArgumentException($"Cannot create a checkpoint in '{dir}': it exists (RocksDB: Directory exists).", nameof(directory));
        }
        string staging = dir + ".tmp";
        lock (s_stagingInUse)
        {
            // Two checkpoints into one directory would share (and empty) one staging directory.
            if (!s_stagingInUse.Add((_fs, staging)))
            {
                throw new InvalidOperationException($"Another checkpoint into '{dir}' is in progress in this process.");
            }
        }
        try
        {
            CreateCheckpointIn(dir, staging, logSizeForFlush);
        }
        finally
        {
            lock (s_stagingInUse)
            {
                s_stagingInUse.Remove((_fs, staging));
            }
        }
    }

    private void CreateCheckpointIn(string dir, string staging, ulong logSizeForFlush)
    {
        string? parent = Path.GetDirectoryName(dir);
        bool renamed = false;
        try
        {
            RemoveStaging(staging);
            _fs.CreateDirectory(staging);
            bool enabled = false;
            _db.DisableFileDeletions();
            try
            {
                bool flush = logSizeForFlush == 0 || (logSizeForFlush != ulong.MaxValue && (ulong)_db.LiveWalBytes() >= logSizeForFlush);
                if (flush)
                {
                    _db.FlushAll(); // every family (atomically with AtomicFlush)
                }
                LiveFileSet set = _db.CaptureLiveFiles(withWals: true);
                CopyLiveFiles(set, staging);
                enabled = true;
                _db.EnableFileDeletions(force: false);
            }
            finally
            {
                if (!enabled)
                {
                    _db.EnableFileDeletions(force: false);
                }
            }
            _fs.SyncDirectory(staging);
            _fs.RenameDirectory(staging, dir);
            renamed = true;
            _fs.SyncDirectory(dir);
            if (parent != null)
            {
                _fs.SyncDirectory(parent);
            }
        }
        catch (Exception e)
        {
            // A checkpoint whose directory could not be made durable is removed too: the caller
            // was told it failed, so nothing may rely on it.
            TryRemoveStaging(renamed ? dir : staging);
            if (e is IOException or UnauthorizedAccessException)
            {
                throw new KvException($"Creating a checkpoint of '{_dir}' in '{dir}' failed: {e.Message}", e);
            }
            throw;
        }
    }

    /// <summary>Step 5: links, copies and CURRENT into <paramref name="staging"/>.</summary>
    private void CopyLiveFiles(LiveFileSet set, string staging)
    {
        bool canLink = true;
        foreach ((ulong number, ulong _) in set.Tables)
        {
            LinkOrCopy(FileNames.TableFile(_dir, number), FileNames.TableFile(staging, number), ref canLink);
        }
        CopyPrefix(_fs, FileNames.ManifestFile(_dir, set.ManifestNumber), FileNames.ManifestFile(staging, set.ManifestNumber), (long)set.ManifestSize);
        using (IWritableFile current = _fs.CreateWritable(FileNames.CurrentFile(staging)))
        {
            current.Append(System.Text.Encoding.ASCII.GetBytes(FileNames.ManifestName(set.ManifestNumber) + "\n"));
            current.Sync();
        }
        if (set.OptionsNumber != 0)
        {
            string name = OptionsFile.OptionsFileNames.FileName(set.OptionsNumber);
            LinkOrCopy(Path.Combine(_dir, name), Path.Combine(staging, name), ref canLink);
        }
        for (int i = 0; i < set.Wals.Count; i++)
        {
            (ulong number, long size) = set.Wals[i];
            string from = FileNames.LogFile(_dir, number);
            string to = FileNames.LogFile(staging, number);
            if (i == set.Wals.Count - 1)
            {
                CopyPrefix(_fs, from, to, size); // still being written: only what the capture saw
            }
            else
            {
                LinkOrCopy(from, to, ref canLink);
            }
        }
    }

    /// <summary>
    /// Hard-links <paramref name="from"/> as <paramref name="to"/>; once a link fails (another
    /// device, no link support) this and every later file is copied instead (RocksDB's rule).
    /// A missing source is an error, not a reason to copy.
    /// </summary>
    private void LinkOrCopy(string from, string to, ref bool canLink)
    {
        if (canLink)
        {
            try
            {
                _fs.LinkFile(from, to);
                return;
            }
            catch (IOException e) when (e is not FileNotFoundException && !_fs.FileExists(to))
            {
                canLink = false; // RocksDB copies too once a link is NotSupported
            }
        }
        if (_fs.FileExists(to))
        {
            // Never copy over an existing name: in staging it may be a hard link to a live table.
            throw new IOException($"Cannot link or copy '{from}' to '{to}': the target exists.");
        }
        CopyPrefix(_fs, from, to, _fs.GetFileSize(from));
    }

    /// <summary>Copies the first <paramref name="size"/> bytes of <paramref name="from"/> into a new, synced <paramref name="to"/>.</summary>
    private static void CopyPrefix(IFileSystem fs, string from, string to, long size)
    {
        using ISequentialFile source = fs.OpenSequential(from);
        using IWritableFile target = fs.CreateWritable(to);
        byte[] buffer = System.Buffers.ArrayPool<byte>.Shared.Rent(64 * 1024);
        try
        {
            long left = size;
            while (left > 0)
            {
                int n = source.Read(buffer.AsSpan(0, (int)Math.Min(buffer.Length, left)));
                if (n <= 0)
                {
                    throw new IOException($"Copying '{from}': the file ended after {size - left} of the {size} bytes to copy.");
                }
                target.Append(buffer.AsSpan(0, n));
                left -= n;
            }
            target.Sync();
        }
        finally
        {
            System.Buffers.ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    /// <summary>Step 1's cleanup: empties and removes a leftover staging directory.</summary>
    private void RemoveStaging(string staging)
    {
        if (!_fs.DirectoryExists(staging))
        {
            return;
        }
        foreach (string name in _fs.GetChildren(staging))
        {
            _fs.DeleteFile(Path.Combine(staging, name));
        }
        _fs.DeleteDirectory(staging);
    }

    private void TryRemoveStaging(string staging)
    {
        try
        {
            RemoveStaging(staging);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // Left for the next checkpoint into the same directory, which removes it first.
        }
    }
}
