using System.Text;
using KvEngine.Format;
using KvEngine.Manifest;
using KvEngine.Storage;
using KvEngine.Util;
using KvEngine.Wal;

namespace KvEngine.Db;

/// <summary>
/// The MANIFEST and everything it records: the current <see cref="Version"/>, the file-number
/// counter, the last sequence number and the oldest live WAL number.
/// <code>
/// MANIFEST := log-format records, each one VersionEdit; the first edit of a MANIFEST is a full
///             snapshot (comparator, log number, next file, last sequence, every live file),
///             followed by the live WALs KvEngine created (<see cref="WalTracker"/>); then one
///             record per change, and one per WAL created
/// CURRENT  := "MANIFEST-NNNNNN\n"   (replaced by write temp, fsync, rename, fsync directory)
/// </code>
/// Thread-safety: <see cref="LogAndApply"/> and the file-number counter are serialized by the
/// set's own lock (I/O happens under it; only flushes, compactions and open call it).
/// <see cref="Current"/> and <see cref="LastSequence"/> are readable from any thread.
/// </summary>
internal sealed class VersionSet : IDisposable
{
    private readonly object _gate = new();
    private readonly string _dir;
    private readonly IFileSystem _fs;
    private readonly HashSet<Version> _live = new();
    private Version _current;
    private ulong _nextFileNumber = 2;
    private ulong _lastSequence;
    private ulong _manifestFileNumber;
    private IWritableFile? _manifestFile;
    private LogWriter? _manifestLog;
    private readonly WalTracker _wals = new();

    public VersionSet(string dir, IFileSystem fs)
    {
        _dir = dir;
        _fs = fs;
        _current = Version.Empty(this);
        _current.Ref();
        _live.Add(_current);
    }

    public Version Current => Volatile.Read(ref _current);

    /// <summary>Sequence number of the last write made visible to readers.</summary>
    public ulong LastSequence => Volatile.Read(ref _lastSequence);

    /// <summary>WAL files numbered below this are fully reflected in tables.</summary>
    public ulong LogNumber { get; private set; }

    public ulong PrevLogNumber { get; private set; }

    /// <summary>Largest column family id RocksDB used; kept in every new MANIFEST so ids are never reused.</summary>
    public uint MaxColumnFamily { get; private set; }

    /// <summary>RocksDB column families that were dropped; WAL replay skips their records.</summary>
    public IReadOnlySet<uint> DroppedColumnFamilies { get; private set; } = new HashSet<uint>();

    public ulong ManifestFileNumber => _manifestFileNumber;

    /// <summary>
    /// The next file number the recovered MANIFEST records: every file numbered at or above it was
    /// created after its last edit. Set by <see cref="Recover"/>.
    /// </summary>
    public ulong RecordedNextFileNumber { get; private set; }

    /// <summary>
    /// Set by <see cref="Recover"/> with best-efforts recovery when it stopped at a damaged record
    /// (what was wrong), null when every record was read.
    /// </summary>
    public string? ManifestDamage { get; private set; }

    /// <summary>The WALs the MANIFEST records as live (see <see cref="WalTracker"/>), ascending. Call under no other writer.</summary>
    public IReadOnlyCollection<ulong> TrackedWals
    {
        get
        {
            lock (_gate)
            {
                return _wals.Live.ToArray();
            }
        }
    }

    public ulong NextFileNumberPeek
    {
        get
        {
            lock (_gate)
            {
                return _nextFileNumber;
            }
        }
    }

    public void SetLastSequence(ulong sequence)
    {
        if (sequence < _lastSequence)
        {
            throw new InvalidOperationException("The last sequence number cannot go backwards.");
        }
        Volatile.Write(ref _lastSequence, sequence);
    }

    public ulong NewFileNumber()
    {
        lock (_gate)
        {
            return _nextFileNumber++;
        }
    }

    /// <summary>Makes sure file numbers from now on are above <paramref name="number"/>.</summary>
    public void MarkFileNumberUsed(ulong number)
    {
        lock (_gate)
        {
            if (_nextFileNumber <= number)
            {
                _nextFileNumber = number + 1;
            }
        }
    }

    /// <summary>Writes the MANIFEST and CURRENT of a new, empty database.</summary>
    public void CreateNew()
    {
        var edit = new VersionEdit
        {
            Comparator = InternalKeyComparer.BytewiseComparatorName,
            LogNumber = 0,
            NextFileNumber = 2,
            LastSequence = 0,
        };
        const ulong manifestNumber = 1;
        string path = FileNames.ManifestFile(_dir, manifestNumber);
        using (IWritableFile file = _fs.CreateWritable(path))
        {
            var log = new LogWriter(file);
            using var buf = new ByteBuffer();
            edit.EncodeTo(buf);
            log.AddRecord(buf.WrittenSpan);
            file.Sync();
        }
        bool renamed = false;
        SetCurrentFile(manifestNumber, ref renamed);
    }

    /// <summary>
    /// Reads CURRENT and the MANIFEST it names, and installs the version they describe. With
    /// <paramref name="bestEfforts"/> a damaged record ends the read instead of failing it (the
    /// state is that of the records before it; <see cref="ManifestDamage"/> says what was wrong),
    /// provided those records hold the database-wide fields.
    /// </summary>
    public void Recover(bool bestEfforts = false)
    {
        string currentPath = FileNames.CurrentFile(_dir);
        string manifestName = ReadCurrent(currentPath);
        string manifestPath = Path.Combine(_dir, manifestName);
        if (!FileNames.TryParse(manifestName, out DbFileType type, out ulong manifestNumber) || type != DbFileType.Manifest)
        {
            throw new KvCorruptionException($"CURRENT names '{manifestName}', which is not a MANIFEST file name.");
        }
        if (!_fs.FileExists(manifestPath))
        {
            throw new KvCorruptionException($"CURRENT names {manifestName}, which does not exist.");
        }

        var builder = new VersionBuilder(Version.Empty(null));
        ulong? logNumber = null;
        ulong? prevLogNumber = null;
        ulong? nextFile = null;
        ulong? lastSequence = null;
        bool sawComparator = false;
        // Blob file number -> blobs not yet garbage. RocksDB drops a blob file once all its blobs are garbage.
        var liveBlobs = new Dictionary<ulong, ulong>();
        var families = new ColumnFamilyTracker();
        using (ISequentialFile file = _fs.OpenSequential(manifestPath))
        using (var scratch = new ByteBuffer(1024))
        {
            LogReader reader = LogReader.ForManifest(file, manifestPath);
            while (true)
            {
                VersionEdit edit;
                try
                {
                    if (!reader.TryReadRecord(scratch, out ReadOnlySpan<byte> record))
                    {
                        break;
                    }
                    edit = VersionEdit.Decode(record);
                }
                catch (KvCorruptionException e) when (bestEfforts)
                {
                    ManifestDamage = e.Message;
                    break;
                }
                _wals.Apply(edit);
                // Database-wide fields below apply from every family's edits; files, the log
                // number (per family in RocksDB) and the comparator only from the default's.
                if (families.Apply(edit, manifestName))
                {
                    if (edit.Comparator != null)
                    {
                        if (edit.Comparator != InternalKeyComparer.BytewiseComparatorName)
                        {
                            throw new KvException(
                                $"The database uses comparator '{edit.Comparator}'; KvEngine supports only '{InternalKeyComparer.BytewiseComparatorName}'.");
                        }
                        sawComparator = true;
                    }
                    builder.Apply(edit);
                    TrackBlobFiles(edit, liveBlobs);
                    logNumber = edit.HasLogNumber ? edit.LogNumber : logNumber;
                }
                prevLogNumber = edit.HasPrevLogNumber ? edit.PrevLogNumber : prevLogNumber;
                nextFile = edit.HasNextFileNumber ? edit.NextFileNumber : nextFile;
                lastSequence = edit.HasLastSequence ? edit.LastSequence : lastSequence;
            }
        }
        if (nextFile == null || lastSequence == null || logNumber == null)
        {
            throw new KvCorruptionException(
                $"{manifestName} lacks {(nextFile == null ? "the next file number" : lastSequence == null ? "the last sequence number" : "the log number")}.");
        }
        if (!sawComparator)
        {
            throw new KvCorruptionException($"{manifestName} does not name a comparator.");
        }
        families.ThrowIfOthersLive(manifestName);
        if (liveBlobs.Count > 0)
        {
            // Tables of such a database hold blob references (type 0x11) instead of values.
            throw new KvException(
                $"{manifestName} lists {liveBlobs.Count} live blob file(s) (RocksDB integrated BlobDB, enable_blob_files); KvEngine does not read blob files yet.");
        }

        Version v = builder.Build(this);
        lock (_gate)
        {
            RecordedNextFileNumber = nextFile.Value;
            _nextFileNumber = Math.Max(nextFile.Value, manifestNumber + 1);
            LogNumber = logNumber.Value;
            PrevLogNumber = prevLogNumber ?? 0;
            MaxColumnFamily = families.MaxColumnFamily;
            DroppedColumnFamilies = families.Dropped;
            _manifestFileNumber = manifestNumber;
            foreach (FileMetaData f in AllFiles(v))
            {
                if (f.Number >= _nextFileNumber)
                {
                    _nextFileNumber = f.Number + 1;
                }
            }
        }
        Volatile.Write(ref _lastSequence, lastSequence.Value);
        Install(v);
    }

    /// <summary>
    /// Records <paramref name="edit"/> durably in the MANIFEST (starting a new MANIFEST holding a
    /// full snapshot when none is open) and installs the resulting version. The edit's log number,
    /// next file number and last sequence are filled in from this set when unset.
    /// </summary>
    public void LogAndApply(VersionEdit edit)
    {
        lock (_gate)
        {
            var builder = new VersionBuilder(_current);
            builder.Apply(edit);
            Version v = builder.Build(this);

            if (!edit.HasLogNumber)
            {
                edit.LogNumber = LogNumber;
            }
            if (edit.LogNumber < LogNumber)
            {
                throw new InvalidOperationException("The log number cannot go backwards.");
            }
            if (!edit.HasPrevLogNumber)
            {
                edit.PrevLogNumber = 0;
            }
            edit.NextFileNumber = _nextFileNumber;
            edit.LastSequence = Math.Max(edit.HasLastSequence ? edit.LastSequence : 0, LastSequence);

            Commit(edit, v, (log, buf, newManifest) =>
            {
                if (newManifest)
                {
                    return; // The snapshot of v, with the edit's counters, is the whole record.
                }
                edit.EncodeTo(buf);
                log.AddRecord(buf.WrittenSpan);
            });
            LogNumber = edit.LogNumber;
            PrevLogNumber = edit.PrevLogNumber;
            _wals.DeleteBefore(edit.LogNumber);
            if (edit.LastSequence > LastSequence)
            {
                Volatile.Write(ref _lastSequence, edit.LastSequence);
            }
            Install(v);
        }
    }

    /// <summary>
    /// Records WAL <paramref name="number"/> as live, durably, in a record of its own (see
    /// <see cref="WalTracker"/>). Call once the file exists and its directory entry is synced,
    /// before anything is written to it.
    /// </summary>
    public void LogWalAddition(ulong number)
    {
        lock (_gate)
        {
            VersionEdit addition = WalTracker.CreationEdit(number);
            var state = new VersionEdit
            {
                LogNumber = LogNumber,
                PrevLogNumber = PrevLogNumber,
                NextFileNumber = _nextFileNumber,
                LastSequence = LastSequence,
            };
            Commit(state, _current, (log, buf, _) =>
            {
                addition.EncodeTo(buf);
                log.AddRecord(buf.WrittenSpan);
            });
            _wals.Add(number);
        }
    }

    /// <summary>
    /// Appends records to the open MANIFEST, or starts a new one with a snapshot of
    /// <paramref name="v"/> and the counters of <paramref name="state"/> (whose next file number
    /// is updated for the new MANIFEST's own number) followed by the records
    /// (<paramref name="writeRecords"/> is told which); syncs; on a new MANIFEST, points CURRENT at
    /// it. Called under <see cref="_gate"/>.
    /// </summary>
    private void Commit(VersionEdit state, Version v, Action<LogWriter, ByteBuffer, bool> writeRecords)
    {
        bool newManifest = _manifestLog == null;
        bool currentNamesNew = false;
        ulong newManifestNumber = 0;
        string? newManifestPath = null;
        if (newManifest)
        {
            newManifestNumber = _nextFileNumber++;
            state.NextFileNumber = _nextFileNumber;
            newManifestPath = FileNames.ManifestFile(_dir, newManifestNumber);
            _manifestFile = _fs.CreateWritable(newManifestPath);
            _manifestLog = new LogWriter(_manifestFile);
        }
        try
        {
            using var buf = new ByteBuffer(512);
            if (newManifest)
            {
                WriteSnapshot(_manifestLog!, buf, v, state);
            }
            writeRecords(_manifestLog!, buf, newManifest);
            _manifestFile!.Sync();
            if (newManifest)
            {
                SetCurrentFile(newManifestNumber, ref currentNamesNew);
                _manifestFileNumber = newManifestNumber;
            }
        }
        catch
        {
            // The MANIFEST may now end in a partial record: never append to it again.
            CloseManifest();
            // Once CURRENT was renamed to name it (only the directory sync failed), the new
            // MANIFEST is what the next open reads: deleting it would leave CURRENT dangling.
            if (newManifestPath != null && !currentNamesNew)
            {
                TryDelete(newManifestPath);
            }
            throw;
        }
    }

    /// <summary>File numbers of every table referenced by a version still in use.</summary>
    public HashSet<ulong> LiveTableNumbers()
    {
        var result = new HashSet<ulong>();
        lock (_gate)
        {
            foreach (Version v in _live)
            {
                foreach (FileMetaData f in AllFiles(v))
                {
                    result.Add(f.Number);
                }
            }
        }
        return result;
    }

    internal void OnVersionReleased(Version v)
    {
        lock (_gate)
        {
            _live.Remove(v);
        }
    }

    public void Dispose()
    {
        lock (_gate)
        {
            CloseManifest();
        }
    }

    private void Install(Version v)
    {
        v.Ref();
        lock (_gate)
        {
            _live.Add(v);
        }
        Version old = Interlocked.Exchange(ref _current, v);
        old.Unref();
    }

    private void WriteSnapshot(LogWriter log, ByteBuffer buf, Version v, VersionEdit edit)
    {
        var snapshot = new VersionEdit
        {
            Comparator = InternalKeyComparer.BytewiseComparatorName,
            LogNumber = edit.LogNumber,
            PrevLogNumber = edit.PrevLogNumber,
            NextFileNumber = edit.NextFileNumber,
            LastSequence = edit.LastSequence,
        };
        if (MaxColumnFamily != 0)
        {
            snapshot.MaxColumnFamily = MaxColumnFamily;
        }
        for (int level = 0; level < Version.NumLevels; level++)
        {
            foreach (FileMetaData f in v.Files(level))
            {
                snapshot.AddFile(level, f);
            }
            if (v.CompactCursor(level) is byte[] cursor)
            {
                snapshot.AddCompactCursor(level, cursor);
            }
        }
        snapshot.EncodeTo(buf);
        log.AddRecord(buf.WrittenSpan);
        buf.Clear();
        if (_wals.SnapshotEdit(snapshot.LogNumber) is VersionEdit wals)
        {
            wals.EncodeTo(buf);
            log.AddRecord(buf.WrittenSpan);
            buf.Clear();
        }
    }

    /// <summary>Points CURRENT at a MANIFEST; <paramref name="renamed"/> turns true once CURRENT names it.</summary>
    private void SetCurrentFile(ulong manifestNumber, ref bool renamed)
    {
        ulong tempNumber = manifestNumber;
        string temp = FileNames.TempFile(_dir, tempNumber);
        using (IWritableFile f = _fs.CreateWritable(temp))
        {
            f.Append(Encoding.ASCII.GetBytes(FileNames.ManifestName(manifestNumber) + "\n"));
            f.Sync();
        }
        _fs.RenameFile(temp, FileNames.CurrentFile(_dir));
        renamed = true;
        _fs.SyncDirectory(_dir);
    }

    private string ReadCurrent(string currentPath)
    {
        if (!_fs.FileExists(currentPath))
        {
            throw new KvCorruptionException($"{currentPath} is missing.");
        }
        long size = _fs.GetFileSize(currentPath);
        if (size is <= 1 or > 4096)
        {
            throw new KvCorruptionException($"CURRENT has an implausible size ({size} bytes).");
        }
        var bytes = new byte[size];
        using (IRandomAccessFile f = _fs.OpenRandomAccess(currentPath))
        {
            if (f.Read(0, bytes) != size)
            {
                throw new KvCorruptionException("CURRENT is shorter than its reported size.");
            }
        }
        if (bytes[^1] != (byte)'\n')
        {
            throw new KvCorruptionException("CURRENT does not end with a newline.");
        }
        foreach (byte b in bytes.AsSpan(0, bytes.Length - 1))
        {
            if (b is < 0x21 or > 0x7E)
            {
                throw new KvCorruptionException("CURRENT holds a malformed file name.");
            }
        }
        return Encoding.ASCII.GetString(bytes, 0, bytes.Length - 1);
    }

    private void CloseManifest()
    {
        try
        {
            _manifestFile?.Dispose();
        }
        catch (IOException)
        {
            // Closing a MANIFEST we are abandoning: its state no longer matters.
        }
        _manifestFile = null;
        _manifestLog = null;
    }

    private void TryDelete(string path)
    {
        try
        {
            _fs.DeleteFile(path);
        }
        catch (IOException)
        {
            // Left behind: the obsolete-file sweep at the next open removes it.
        }
    }

    private static void TrackBlobFiles(VersionEdit edit, Dictionary<ulong, ulong> liveBlobs)
    {
        foreach (BlobFileAddition add in edit.BlobFileAdditions)
        {
            liveBlobs[add.BlobFileNumber] = add.TotalBlobCount;
        }
        foreach (BlobFileGarbage garbage in edit.BlobFileGarbages)
        {
            if (liveBlobs.TryGetValue(garbage.BlobFileNumber, out ulong remaining))
            {
                if (garbage.GarbageBlobCount >= remaining)
                {
                    liveBlobs.Remove(garbage.BlobFileNumber);
                }
                else
                {
                    liveBlobs[garbage.BlobFileNumber] = remaining - garbage.GarbageBlobCount;
                }
            }
        }
    }

    private static IEnumerable<FileMetaData> AllFiles(Version v)
    {
        for (int level = 0; level < Version.NumLevels; level++)
        {
            foreach (FileMetaData f in v.Files(level))
            {
                yield return f;
            }
        }
    }
}
