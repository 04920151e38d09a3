using KvEngine.Versions;
using KvEngine.Storage;
using KvEngine.Util;
using KvEngine.Wal;

namespace KvEngine.Db;

/// <summary>
/// The live files of the database (RocksDB's GetLiveFiles, GetSortedWalFiles and
/// GetLiveFilesStorageInfo) for checkpoints and external backups. A capture takes the tables,
/// MANIFEST size and MinLogNumberToKeep under the version set's lock (one consistent state), then
/// the OPTIONS file (under the family gate, so no OPTIONS write is half done) and last the WALs
/// under _mutex (the current WAL's size at a record boundary, <see cref="Logs.WalSet.FlushedSize"/>).
/// The files stay on disk only while file deletions are disabled.
/// </summary>
internal sealed partial class DbImpl
{
    /// <summary>Creates a checkpoint of the database in <paramref name="directory"/> (<see cref="Checkpoints.Checkpointer"/>).</summary>
    public void CreateCheckpoint(string directory, ulong logSizeForFlush)
    {
        ArgumentException.ThrowIfNullOrEmpty(directory);
        ThrowIfDisposed();
        ThrowIfReadOnly("CreateCheckpoint");
        new Checkpoints.Checkpointer(this, _fs).CreateCheckpoint(directory, logSizeForFlush);
    }

    /// <summary>
    /// RocksDB's GetLiveFiles: names relative to the database directory with a leading '/'
    /// ("/000012.sst", "/CURRENT", "/MANIFEST-000005", "/OPTIONS-000007") and the MANIFEST size to
    /// copy. With <paramref name="flushMemtable"/> every family is flushed first (atomically with
    /// AtomicFlush), so the tables hold every write; otherwise unflushed writes are only in the
    /// WALs (<see cref="GetSortedWalFiles"/>).
    /// </summary>
    public List<string> GetLiveFiles(bool flushMemtable, out ulong manifestFileSize)
    {
        ThrowIfDisposed();
        if (flushMemtable)
        {
            ThrowIfReadOnly("GetLiveFiles with a memtable flush");
            FlushCore(null, wait: true);
        }
        LiveFileSet set = CaptureLiveFiles(withWals: false);
        var names = new List<string>(set.Tables.Count + 3);
        foreach ((ulong number, ulong _) in set.Tables)
        {
            names.Add("/" + Path.GetFileName(FileNames.TableFile(_dir, number)));
        }
        names.Add("/" + FileNames.Current);
        names.Add("/" + FileNames.ManifestName(set.ManifestNumber));
        if (set.OptionsNumber != 0)
        {
            names.Add("/" + OptionsFile.OptionsFileNames.FileName(set.OptionsNumber));
        }
        manifestFileSize = set.ManifestSize;
        return names;
    }

    /// <summary>
    /// RocksDB's GetSortedWalFiles: every WAL file in the directory, ascending, with the sequence
    /// number of each one's first batch (0 for an empty WAL) and its size now (the one being written:
    /// up to its last record). Not only those at or
    /// above MinLogNumberToKeep: a flush between GetLiveFiles and this call moves that bound, and a
    /// backup whose MANIFEST still tracks the older WAL needs it (while deletions are disabled it
    /// stays on disk). A WAL that an obsolete-file sweep deletes meanwhile is left out.
    /// </summary>
    public List<(ulong Number, ulong StartSequence, long Size)> GetSortedWalFiles()
    {
        ThrowIfDisposed();
        (ulong current, long currentSize) = CurrentWal();
        List<ulong> numbers = WalNumbers(0, ulong.MaxValue);
        var result = new List<(ulong, ulong, long)>(numbers.Count);
        foreach (ulong number in numbers)
        {
            string path = FileNames.LogFile(_dir, number);
            try
            {
                // The WAL being written: its size at the last record boundary, not the file's
                // (a memory-mapped WAL's file includes the reserved zeros of its window).
                long size = number == current ? currentSize : _fs.GetFileSize(path);
                result.Add((number, FirstSequence(path, number), size));
            }
            catch (FileNotFoundException)
            {
                // Deleted by a sweep since the listing: no longer live.
            }
        }
        return result;
    }

    /// <summary>The WAL being written and its size at the last record boundary, read together under the mutex.</summary>
    private (ulong Number, long Size) CurrentWal()
    {
        lock (_mutex)
        {
            return (_wals.CurrentNumber, _wals.FlushedSize);
        }
    }

    /// <summary>The sequence number of the first batch of WAL <paramref name="path"/>, 0 when it holds none.</summary>
    private ulong FirstSequence(string path, ulong number)
    {
        using ISequentialFile file = _fs.OpenSequential(path);
        using var scratch = new ByteBuffer(256);
        var reader = new LogReader(file, WalRecoveryMode.TolerateCorruptedTailRecords, null, number, verifyChecksums: true, fileName: path);
        return reader.TryReadRecord(scratch, out ReadOnlySpan<byte> record) && record.Length >= 8 ? Coding.DecodeFixed64(record) : 0;
    }

    /// <summary>
    /// Captures the live files (see <see cref="LiveFileSet"/>); with <paramref name="withWals"/>
    /// also the WALs at or above the captured MinLogNumberToKeep, the current one with its size at
    /// the last record boundary. The caller keeps file deletions disabled while it uses them.
    /// </summary>
    internal LiveFileSet CaptureLiveFiles(bool withWals)
    {
        LiveFileSet set;
        lock (_familyGate)
        {
            ThrowIfDisposed();
            List<(ulong Number, ulong Size)> tables = _versions.CaptureLiveFiles(out ulong manifest, out ulong manifestSize, out ulong minLog);
            set = new LiveFileSet(tables, manifest, manifestSize, minLog);
            set.OptionsNumber = OptionsFile.OptionsFileStore.Newest(_fs, _dir);
        }
        if (!withWals)
        {
            return set;
        }
        (ulong current, long currentSize) = CurrentWal();
        foreach (ulong number in WalNumbers(set.MinLogNumberToKeep, current))
        {
            set.Wals.Add((number, number == current ? currentSize : _fs.GetFileSize(FileNames.LogFile(_dir, number))));
        }
        return set;
    }

    /// <summary>The bytes of the WALs on disk at or above MinLogNumberToKeep (the checkpoint's flush rule).</summary>
    internal long LiveWalBytes()
    {
        long total = 0;
        foreach (ulong number in WalNumbers(_versions.MinLogNumberToKeep, ulong.MaxValue))
        {
            try
            {
                total += _fs.GetFileSize(FileNames.LogFile(_dir, number));
            }
            catch (FileNotFoundException)
            {
                // Deleted since the listing: no longer live.
            }
        }
        return total;
    }

    /// <summary>The numbers of the WAL files in the directory within [<paramref name="min"/>, <paramref name="max"/>], ascending.</summary>
    private List<ulong> WalNumbers(ulong min, ulong max)
    {
        var numbers = new List<ulong>();
        foreach (string name in _fs.GetChildren(_dir))
        {
            if (FileNames.TryParse(name, out DbFileType type, out ulong number) && type == DbFileType.Log && number >= min && number <= max)
            {
                numbers.Add(number);
            }
        }
        numbers.Sort();
        return numbers;
    }
}
