using KvEngine.Db.State;
using KvEngine.Storage;
using KvEngine.Versions;
using KvEngine.Wal;

namespace KvEngine.Db.Logs;

/// <summary>
/// The WALs of a read-write database (RocksDB's <c>logs_</c> and <c>alive_log_files_</c>): the one
/// being written, which every column family shares (one record per write group, so a batch is
/// atomic across families), and the older ones that may still hold unflushed data, with their
/// sizes for the total-WAL-size trigger. Which WAL a family's unflushed data starts in is the
/// family's log number in the version set; <see cref="OldestLive"/> combines the two.
/// <para>
/// Invariants: the current WAL's name is durable and recorded in the MANIFEST before any record
/// is appended to it (<see cref="Start"/>, <see cref="Roll"/>); the older WALs are listed oldest
/// first, each below the current one; <see cref="FlushedSize"/> is always at a record boundary.
/// </para>
/// <para>
/// Thread-safety: <see cref="Start"/>, <see cref="Roll"/>, <see cref="SyncCurrent"/>, the current
/// number and the list of older WALs are used under the database mutex, with no write group
/// appending (the memtable switch holds the writer queue's head). <see cref="Append"/> runs
/// outside the mutex, by the one group leader that writes the WAL at a time (the writer queue
/// orders them); the current WAL's byte count and flushed size are read lock-free (interlocked
/// and volatile).
/// </para>
/// </summary>
internal sealed class WalSet : IDisposable
{
    private readonly DbMutex _mutex;
    private readonly string _dir;
    private readonly IFileSystem _fs;
    private readonly VersionSet _versions;
    private readonly bool _memoryMapped;
    private readonly List<(ulong Number, long Bytes)> _older = new();
    private IWritableFile? _file;
    private LogWriter? _writer;
    private ulong _number;
    private long _currentBytes;  // record bytes appended to the current WAL (interlocked)
    private long _flushedSize;   // bytes of the current WAL handed to the OS, at a record boundary (volatile)

    public WalSet(DbMutex mutex, string dir, IFileSystem fs, VersionSet versions, bool memoryMapped)
    {
        _mutex = mutex;
        _dir = dir;
        _fs = fs;
        _versions = versions;
        _memoryMapped = memoryMapped;
    }

    /// <summary>Holds the mutex. The number of the WAL new writes go to (0 before <see cref="Start"/>).</summary>
    public ulong CurrentNumber
    {
        get
        {
            _mutex.AssertHeld();
            return _number;
        }
    }

    /// <summary>Bytes of the current WAL handed to the OS, at the last record boundary (what a checkpoint copies).</summary>
    public long FlushedSize => Volatile.Read(ref _flushedSize);

    /// <summary>At open, before any write: WAL <paramref name="number"/> becomes the current one.</summary>
    public void Start(ulong number)
    {
        OpenNew(number, abandonOld: false);
        _number = number;
    }

    /// <summary>
    /// Group leader, outside the mutex: appends <paramref name="record"/> (a write group's batch)
    /// to the current WAL, hands it to the OS, and with <paramref name="sync"/> makes it durable.
    /// </summary>
    public void Append(ReadOnlySpan<byte> record, bool sync)
    {
        _mutex.AssertNotHeld();
        IWritableFile file = _file!;
        _writer!.AddRecord(record);
        file.Flush();
        Volatile.Write(ref _flushedSize, file.Size); // a record boundary (checkpoints copy up to it)
        Interlocked.Add(ref _currentBytes, record.Length);
        if (sync)
        {
            file.Sync();
        }
    }

    /// <summary>Holds the mutex, no group appending: makes the current WAL durable (before a switch away from it).</summary>
    public void SyncCurrent()
    {
        _mutex.AssertHeld();
        _file!.Sync();
    }

    /// <summary>
    /// Holds the mutex, no group appending: WAL <paramref name="number"/> becomes the current one
    /// and the previous one joins the older WALs. The previous one was synced by the caller, so
    /// closing it writes nothing; with <paramref name="abandonOld"/> (resuming after an error) it
    /// may not be writable, and a failure to close it is ignored. On failure nothing changes.
    /// </summary>
    public void Roll(ulong number, bool abandonOld)
    {
        _mutex.AssertHeld();
        OpenNew(number, abandonOld);
        _older.Add((_number, Interlocked.Exchange(ref _currentBytes, 0)));
        _number = number;
    }

    /// <summary>Holds the mutex. The bytes of the current and older WALs (RocksDB's total_log_size_).</summary>
    public long TotalBytes()
    {
        _mutex.AssertHeld();
        long total = Volatile.Read(ref _currentBytes);
        foreach ((ulong _, long bytes) in _older)
        {
            total += bytes;
        }
        return total;
    }

    /// <summary>Holds the mutex. The oldest WAL that may hold unflushed data (the current one when no older one is left).</summary>
    public ulong OldestNumber
    {
        get
        {
            _mutex.AssertHeld();
            return _older.Count > 0 ? _older[0].Number : _number;
        }
    }

    /// <summary>
    /// Holds the mutex. The smallest WAL number still needed (the current WAL, or an older one some
    /// family's log number keeps); the older WALs below it leave the size accounting (the obsolete
    /// file sweeper deletes them).
    /// </summary>
    public ulong OldestLive()
    {
        _mutex.AssertHeld();
        ulong minLog = Math.Min(_versions.MinLogNumberToKeep, _number);
        _older.RemoveAll(l => l.Number < minLog);
        return minLog;
    }

    /// <summary>Closes the current WAL (at close; its records stay for the next open to replay).</summary>
    public void Dispose() => _file?.Dispose();

    private void OpenNew(ulong number, bool abandonOld)
    {
        IWritableFile file = _fs.CreateLogFile(FileNames.LogFile(_dir, number), _memoryMapped);
        try
        {
            // Durable name first, then the MANIFEST's record of it, then writes: a WAL the
            // MANIFEST tracks exists unless later edits were lost (RecoveryDamage).
            _fs.SyncDirectory(_dir);
            _versions.LogWalAddition(number);
        }
        catch
        {
            file.Dispose();
            throw;
        }
        IWritableFile? old = _file;
        _file = file;
        _writer = new LogWriter(file);
        Volatile.Write(ref _flushedSize, 0);
        if (!abandonOld)
        {
            old?.Dispose();
            return;
        }
        try
        {
            old?.Dispose();
        }
        catch (IOException)
        {
            // The abandoned log's handle is closed anyway; its contents are being flushed to tables.
        }
    }
}
