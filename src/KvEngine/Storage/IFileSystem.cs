namespace KvEngine.Storage;

/// <summary>
/// Every file operation the engine performs. <see cref="LocalFileSystem"/> is the real one;
/// <see cref="FaultInjectionFileSystem"/> keeps files in memory, can "crash" (dropping whatever was
/// not synced) and can inject I/O errors, which makes durability testable (after Pebble's vfs.FS).
/// Paths are full paths. Implementations are thread-safe; the file objects they return are used by
/// one thread at a time unless they say otherwise. I/O failures surface as <see cref="IOException"/>.
/// </summary>
internal interface IFileSystem
{
    /// <summary>Creates (or truncates) a file for appending.</summary>
    IWritableFile CreateWritable(string path);

    /// <summary>
    /// Creates (or truncates) a write-ahead log. With <paramref name="memoryMapped"/> a file system
    /// that can map files writes it through a mapping (<see cref="LocalMappedWritableFile"/>);
    /// others, and this one where mapping is not possible, create it as <see cref="CreateWritable(string)"/> does.
    /// </summary>
    IWritableFile CreateLogFile(string path, bool memoryMapped) => CreateWritable(path);

    /// <summary>Opens an existing file for positional reads; thread-safe reads.</summary>
    IRandomAccessFile OpenRandomAccess(string path);

    /// <summary>
    /// <see cref="OpenRandomAccess(string)"/>, bypassing the operating system's page cache with
    /// <paramref name="useDirectIO"/> where the file system does direct I/O (the local one on Linux:
    /// <see cref="LocalDirectRandomAccessFile"/>); others open the file as usual.
    /// </summary>
    IRandomAccessFile OpenRandomAccess(string path, bool useDirectIO) => OpenRandomAccess(path);

    /// <summary>
    /// <see cref="OpenRandomAccess(string, bool)"/> for a table file the database reads at random:
    /// with <paramref name="adviseRandom"/> (and buffered I/O) a file system that can tells the
    /// operating system not to read ahead on it (RocksDB's advise_random_on_open).
    /// </summary>
    IRandomAccessFile OpenRandomAccess(string path, bool useDirectIO, bool adviseRandom) => OpenRandomAccess(path, useDirectIO);

    /// <summary>
    /// <see cref="CreateWritable(string)"/>, writing around the page cache with
    /// <paramref name="useDirectIO"/> where the file system does direct I/O
    /// (<see cref="LocalDirectWritableFile"/>); others create the file as usual.
    /// </summary>
    IWritableFile CreateWritable(string path, bool useDirectIO) => CreateWritable(path);

    /// <summary>
    /// Throws <see cref="NotSupportedException"/> when the existing file <paramref name="path"/>
    /// cannot be opened with direct I/O (a database tries a file of its directory at open when
    /// direct I/O is asked for). File systems without direct I/O accept every file (they serve
    /// direct opens buffered).
    /// </summary>
    void CheckDirectIO(string path)
    {
    }

    /// <summary>Opens an existing file for reading front to back.</summary>
    ISequentialFile OpenSequential(string path);

    bool FileExists(string path);

    long GetFileSize(string path);

    void DeleteFile(string path);

    /// <summary>Renames, replacing <paramref name="to"/> atomically if it exists.</summary>
    void RenameFile(string from, string to);

    /// <summary>
    /// Makes <paramref name="to"/> a second name (a hard link) for the existing file
    /// <paramref name="from"/>; both must be on one file system. Throws <see cref="IOException"/>
    /// when <paramref name="to"/> exists or links are not possible (another device, a file system
    /// without links): callers that can copy instead catch it and copy.
    /// </summary>
    void LinkFile(string from, string to);

    /// <summary>
    /// Overwrites <paramref name="data"/> at <paramref name="offset"/> inside the existing file
    /// <paramref name="path"/> (within its current length) and makes the file durable before
    /// returning (RocksDB's FSRandomRWFile Write then Sync; ingestion writes a global sequence
    /// number this way). Every name of a hard-linked file sees the change.
    /// </summary>
    void WriteAt(string path, long offset, ReadOnlySpan<byte> data);

    /// <summary>
    /// Cuts the existing file <paramref name="path"/> to <paramref name="length"/> bytes (at most
    /// its current length) and makes the new length durable before returning (RocksDB's
    /// FSWritableFile Truncate then Fsync; recovery drops a WAL's torn tail this way). Needs no
    /// free space.
    /// </summary>
    void TruncateFile(string path, long length);

    void CreateDirectory(string path);

    bool DirectoryExists(string path);

    /// <summary>Removes the empty directory <paramref name="path"/>; <see cref="IOException"/> when it holds entries.</summary>
    void DeleteDirectory(string path);

    /// <summary>
    /// Renames the directory <paramref name="from"/> (with everything in it) to <paramref name="to"/>,
    /// which must not exist; durable once the parent directory is synced.
    /// </summary>
    void RenameDirectory(string from, string to);

    /// <summary>Names (not paths) of the entries directly inside <paramref name="directory"/>.</summary>
    IReadOnlyList<string> GetChildren(string directory);

    /// <summary>Makes creations, deletions and renames inside <paramref name="directory"/> durable.</summary>
    void SyncDirectory(string directory);

    /// <summary>
    /// Takes an exclusive lock on <paramref name="path"/> (creating it), held until the returned
    /// object is disposed. Throws <see cref="IOException"/> when another holder has it.
    /// </summary>
    IDisposable LockFile(string path);
}
