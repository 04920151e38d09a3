using System.Text;
using KvEngine.Format;
using KvEngine.Storage;
using KvEngine.Util;
using KvEngine.Wal;

namespace KvEngine.Versions;

/// <summary>
/// The MANIFEST and everything it records: each column family's current <see cref="Version"/> and
/// log number (<see cref="ColumnFamilyVersions"/>), the file-number counter, the last sequence
/// number, MinLogNumberToKeep and the largest column family id.
/// <code>
/// MANIFEST := log-format records, each one VersionEdit. A new MANIFEST starts with a snapshot:
///             per live family in id order  { [ColumnFamily id, ColumnFamilyAdd name] (not for
///               default), Comparator, [MaxColumnFamily on the first] }
///             { [ColumnFamily id], every file, compact cursors, LogNumber,
///               default only: PrevLogNumber, NextFileNumber, LastSequence, [MinLogNumberToKeep] },
///             then the live WALs KvEngine created (<see cref="WalTracker"/>); then one record per
///             change (several for an atomic change, one sync), and one per WAL created
/// CURRENT  := "MANIFEST-NNNNNN\n"   (replaced by write temp, fsync, rename, fsync directory)
/// </code>
/// Invariants: ids are never reused (a new family takes MaxColumnFamily + 1); a WAL numbered below
/// <see cref="MinLogNumberToKeep"/> holds nothing any live family still needs; the default family
/// always exists. No table is created under a number the MANIFEST has not yet covered: a table
/// number at or above the last NextFileNumber written is first recorded
/// (<see cref="RecordFileNumber"/>), so every table on disk is numbered below the NextFileNumber of
/// some record written before the file existed — a table at or above a recovered MANIFEST's next
/// file number proves that records were lost (<c>RecoveryDamage</c>).
/// Thread-safety: every change (edits, family creation and drop, the file-number counter) is
/// serialized by the set's own lock, under which the MANIFEST I/O happens (only flushes,
/// compactions, family changes and open call it). Families' current versions and
/// <see cref="LastSequence"/> are readable from any thread.
/// </summary>
internal sealed class VersionSet : IDisposable
{
    private readonly object _gate = new();
    private readonly string _dir;
    private readonly IFileSystem _fs;
    private readonly HashSet<Version> _live = new();
    private readonly WalTracker _wals = new();
    private readonly SortedDictionary<uint, ColumnFamilyVersions> _families = new();
    private ulong _nextFileNumber = 2;
    private ulong _lastSequence;
    private ulong _manifestFileNumber;
    private long _recoveredManifestLength; // the MANIFEST length Recover applied (read-only GetLiveFiles)
    private ulong _persistedMinLogToKeep;
    private ulong _durableNextFileNumber; // the NextFileNumber the MANIFEST as written records
    private IWritableFile? _manifestFile;
    private LogWriter? _manifestLog;

    public VersionSet(string dir, IFileSystem fs)
    {
        _dir = dir;
        _fs = fs;
        Default = AddFamily(ColumnFamilyVersions.DefaultId, ColumnFamilyVersions.DefaultName, Version.Empty(this), 0);
    }

    /// <summary>The default column family (id 0), which always exists.</summary>
    public ColumnFamilyVersions Default { get; private set; }

    /// <summary>The default family's current version.</summary>
    public Version Current => Default.Current;

    /// <summary>Sequence number of the last write made visible to readers.</summary>
    public ulong LastSequence => Volatile.Read(ref _lastSequence);

    public ulong PrevLogNumber { get; private set; }

    /// <summary>Largest column family id ever used; kept in every new MANIFEST so ids are never reused.</summary>
    public uint MaxColumnFamily { get; private set; }

    public ulong ManifestFileNumber => _manifestFileNumber;

    /// <summary>
    /// The next file number the recovered MANIFEST records: every file numbered at or above it was
    /// created after its last edit. Set by <see cref="Recover"/>.
    /// </summary>
    public ulong RecordedNextFileNumber { get; private set; }

    /// <summary>
    /// Tables the recovered MANIFEST retired: an edit it holds deleted them, or they belonged to a
    /// family it dropped. Set by <see cref="Recover"/>; empty for a new database.
    /// </summary>
    public IReadOnlySet<ulong> RetiredTables { get; private set; } = new HashSet<ulong>();

    /// <summary>
    /// The next file number the MANIFEST as written records (its last record's, or the recovered
    /// one): every table this instance created is numbered below it (<see cref="RecordFileNumber"/>).
    /// </summary>
    public ulong DurableNextFileNumber
    {
        get
        {
            lock (_gate)
            {
                return _durableNextFileNumber;
            }
        }
    }

    /// <summary>
    /// Set by <see cref="Recover"/> with best-efforts recovery when it stopped at a damaged record
    /// (what was wrong), null when every record was read.
    /// </summary>
    public string? ManifestDamage { get; private set; }

    /// <summary>
    /// WALs numbered below this hold nothing a live family needs: the recorded MinLogNumberToKeep
    /// or every live family's log number, whichever is larger (RocksDB's recovery rule).
    /// Families' in-memory log numbers count, so this may run ahead of the MANIFEST.
    /// </summary>
    public ulong MinLogNumberToKeep
    {
        get
        {
            lock (_gate)
            {
                return Math.Max(_persistedMinLogToKeep, MinFamilyLogNumber());
            }
        }
    }

    /// <summary>The WALs the MANIFEST records as live (see <see cref="WalTracker"/>), ascending.</summary>
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

    /// <summary>The live families in id order (a copy).</summary>
    public ColumnFamilyVersions[] Families
    {
        get
        {
            lock (_gate)
            {
                var result = new ColumnFamilyVersions[_families.Count];
                _families.Values.CopyTo(result, 0);
                return result;
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

    /// <summary>
    /// Makes the MANIFEST cover table number <paramref name="number"/> (allocated by
    /// <see cref="NewFileNumber"/>) before the table is created: when it is at or above the
    /// NextFileNumber last written, a record holding only the next file number (and the last
    /// sequence) is written and synced. A crash then leaves an unfinished output below the
    /// recovered next file number, where the open's sweep deletes it, and a table at or above that
    /// number is always evidence of lost records. Throws what the MANIFEST write throws.
    /// </summary>
    public void RecordFileNumber(ulong number)
    {
        lock (_gate)
        {
            if (number < _durableNextFileNumber)
            {
                return;
            }
            Commit([new VersionEdit()]);
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

    /// <summary>
    /// At a WAL switch, a family with nothing in its memtable needs no WAL below
    /// <paramref name="logNumber"/>: its log number moves there in memory only.
    /// </summary>
    public void AdvanceLogNumber(ColumnFamilyVersions family, ulong logNumber)
    {
        lock (_gate)
        {
            if (!family.IsDropped && family.LogNumber < logNumber)
            {
                family.LogNumber = logNumber;
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
    /// Reads CURRENT and the MANIFEST it names (<see cref="ManifestReader"/>), and installs every
    /// live family's version and the counters. With <paramref name="bestEfforts"/> a damaged
    /// record ends the read (<see cref="ManifestDamage"/> says what was wrong).
    /// </summary>
    public void Recover(bool bestEfforts = false)
    {
        RecoveredManifest m = ManifestReader.Read(_fs, _dir, bestEfforts, _wals);
        lock (_gate)
        {
            RecordedNextFileNumber = m.NextFileNumber;
            _durableNextFileNumber = m.NextFileNumber;
            RetiredTables = m.RetiredTables;
            _nextFileNumber = Math.Max(m.NextFileNumber, m.ManifestNumber + 1);
            PrevLogNumber = m.PrevLogNumber;
            MaxColumnFamily = m.MaxColumnFamily;
            ManifestDamage = m.Damage;
            _persistedMinLogToKeep = m.MinLogNumberToKeep;
            _manifestFileNumber = m.ManifestNumber;
            _recoveredManifestLength = m.AppliedLength;
            Volatile.Write(ref _lastSequence, m.LastSequence);
            foreach (RecoveredFamily rf in m.Families.Values)
            {
                Version v = rf.Builder.Build(this);
                foreach (FileMetaData f in AllFiles(v))
                {
                    _nextFileNumber = Math.Max(_nextFileNumber, f.Number + 1);
                }
                if (rf.Id == ColumnFamilyVersions.DefaultId)
                {
                    Install(Default, v);
                    Default.LogNumber = rf.LogNumber;
                }
                else
                {
                    AddFamily(rf.Id, rf.Name, v, rf.LogNumber);
                }
            }
        }
    }

    /// <summary>The live family named <paramref name="name"/>, or null.</summary>
    public ColumnFamilyVersions? FindFamily(string name)
    {
        lock (_gate)
        {
            foreach (ColumnFamilyVersions f in _families.Values)
            {
                if (f.Name == name)
                {
                    return f;
                }
            }
            return null;
        }
    }

    /// <summary>
    /// Records a new family durably (RocksDB's CreateColumnFamily edit: id = MaxColumnFamily + 1,
    /// the name, the comparator and the current WAL as its log number) and returns it.
    /// </summary>
    public ColumnFamilyVersions CreateFamily(string name, ulong logNumber)
    {
        lock (_gate)
        {
            foreach (ColumnFamilyVersions f in _families.Values)
            {
                if (f.Name == name)
                {
                    throw new ArgumentException($"Column family '{name}' already exists.", nameof(name));
                }
            }
            uint id = MaxColumnFamily + 1;
            var edit = new VersionEdit
            {
                ColumnFamily = id,
                ColumnFamilyAdd = name,
                Comparator = InternalKeyComparer.BytewiseComparatorName,
                LogNumber = logNumber,
            };
            Commit([edit]);
            MaxColumnFamily = id;
            return AddFamily(id, name, Version.Empty(this), logNumber);
        }
    }

    /// <summary>Records the drop of <paramref name="family"/> durably (ColumnFamily, ColumnFamilyDrop, MaxColumnFamily).</summary>
    public void DropFamily(ColumnFamilyVersions family)
    {
        if (family.Id == ColumnFamilyVersions.DefaultId)
        {
            throw new InvalidOperationException("The default column family cannot be dropped.");
        }
        lock (_gate)
        {
            if (family.IsDropped)
            {
                return;
            }
            var edit = new VersionEdit
            {
                ColumnFamily = family.Id,
                IsColumnFamilyDrop = true,
                MaxColumnFamily = MaxColumnFamily,
            };
            // The WALs only this family kept alive become obsolete now (they are deleted once this
            // returns), so the same write records the new MinLogNumberToKeep: otherwise the
            // MANIFEST would still need a WAL that is gone and refuse the next open.
            ulong minLog = ulong.MaxValue;
            foreach (ColumnFamilyVersions f in _families.Values)
            {
                if (f != family)
                {
                    minLog = Math.Min(minLog, f.LogNumber);
                }
            }
            bool advance = minLog != ulong.MaxValue && minLog > _persistedMinLogToKeep;
            Commit(advance ? [edit, new VersionEdit { MinLogNumberToKeep = minLog }] : [edit]);
            if (advance)
            {
                _persistedMinLogToKeep = minLog;
            }
            family.IsDropped = true;
            _families.Remove(family.Id);
            _wals.DeleteBefore(Math.Max(_persistedMinLogToKeep, MinFamilyLogNumber()));
            // The set's reference on the family's last version goes: readers that still use it
            // hold their own, and its files become obsolete once they are done.
            family.Exchange(Version.Empty(null)).Unref();
        }
    }

    /// <summary>
    /// Records <paramref name="edit"/> durably in the MANIFEST and installs the new version of the
    /// family its ColumnFamily names; see <see cref="LogAndApply(IReadOnlyList{VersionEdit})"/>.
    /// </summary>
    public void LogAndApply(VersionEdit edit) => LogAndApply([edit]);

    /// <summary>
    /// Records <paramref name="edits"/> durably in the MANIFEST with one sync (starting a new
    /// MANIFEST holding a snapshot first when none is open) and installs each family's new
    /// version. An edit that changes a family carries its log number (the family's when unset; it
    /// never goes backwards); the last edit carries the next file number and last sequence. Throws
    /// <see cref="InvalidOperationException"/> for an edit of a family that was dropped (the
    /// caller's job is void).
    /// </summary>
    public void LogAndApply(IReadOnlyList<VersionEdit> edits)
    {
        lock (_gate)
        {
            var builders = new Dictionary<ColumnFamilyVersions, VersionBuilder>();
            foreach (VersionEdit edit in edits)
            {
                if (IsDatabaseWideOnly(edit))
                {
                    continue;
                }
                if (!_families.TryGetValue(edit.ColumnFamily, out ColumnFamilyVersions? family))
                {
                    throw new ColumnFamilyDroppedException(edit.ColumnFamily);
                }
                if (!builders.TryGetValue(family, out VersionBuilder? builder))
                {
                    builders[family] = builder = new VersionBuilder(family.Current);
                }
                builder.Apply(edit);
                if (!edit.HasLogNumber)
                {
                    edit.LogNumber = family.LogNumber;
                }
                if (edit.LogNumber < family.LogNumber)
                {
                    throw new InvalidOperationException("A column family's log number cannot go backwards.");
                }
                if (family.Id == ColumnFamilyVersions.DefaultId && !edit.HasPrevLogNumber)
                {
                    edit.PrevLogNumber = 0;
                }
            }
            var versions = new List<(ColumnFamilyVersions Family, Version Version)>(builders.Count);
            foreach (KeyValuePair<ColumnFamilyVersions, VersionBuilder> b in builders)
            {
                versions.Add((b.Key, b.Value.Build(this)));
            }
            ulong lastSequence = LastSequence;
            foreach (VersionEdit edit in edits)
            {
                if (edit.HasLastSequence)
                {
                    lastSequence = Math.Max(lastSequence, edit.LastSequence);
                }
            }
            edits[^1].LastSequence = lastSequence;
            Commit(edits);
            foreach (VersionEdit edit in edits)
            {
                if (edit.HasMinLogNumberToKeep)
                {
                    _persistedMinLogToKeep = Math.Max(_persistedMinLogToKeep, edit.MinLogNumberToKeep);
                }
                if (!IsDatabaseWideOnly(edit) && _families.TryGetValue(edit.ColumnFamily, out ColumnFamilyVersions? family))
                {
                    family.LogNumber = Math.Max(family.LogNumber, edit.LogNumber);
                    family.RecordedLogNumber = Math.Max(family.RecordedLogNumber, edit.LogNumber);
                    if (family.Id == ColumnFamilyVersions.DefaultId)
                    {
                        PrevLogNumber = edit.PrevLogNumber;
                    }
                }
            }
            _wals.DeleteBefore(Math.Max(_persistedMinLogToKeep, MinFamilyLogNumber()));
            if (lastSequence > LastSequence)
            {
                Volatile.Write(ref _lastSequence, lastSequence);
            }
            foreach ((ColumnFamilyVersions family, Version v) in versions)
            {
                Install(family, v);
            }
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
            Commit([WalTracker.CreationEdit(number)]);
            _wals.Add(number);
        }
    }

    /// <summary>File numbers of every table referenced by a version still in use, of any family.</summary>
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

    /// <summary>
    /// Under the set's lock, so no edit lands between them: the tables of every live family's
    /// current version, the MANIFEST's number and size (the file on disk when none is open for
    /// writing, e.g. read-only) and the MinLogNumberToKeep that MANIFEST records (RocksDB's GetLiveFilesStorageInfo capture).
    /// </summary>
    public List<(ulong Number, ulong Size)> CaptureLiveFiles(out ulong manifestNumber, out ulong manifestSize, out ulong minLogNumberToKeep)
    {
        lock (_gate)
        {
            var tables = new SortedDictionary<ulong, ulong>();
            foreach (ColumnFamilyVersions family in _families.Values)
            {
                foreach (FileMetaData f in AllFiles(family.Current))
                {
                    tables[f.Number] = f.FileSize;
                }
            }
            var list = new List<(ulong Number, ulong Size)>(tables.Count);
            foreach (KeyValuePair<ulong, ulong> t in tables)
            {
                list.Add((t.Key, t.Value));
            }
            manifestNumber = _manifestFileNumber;
            // Read-only (no MANIFEST open for writing): the length this instance recovered, not the
            // file's length now, which a writer beside it may have grown past the listed tables
            // (RocksDB's manifest_file_size_).
            manifestSize = (ulong)(_manifestFile?.Size ?? _recoveredManifestLength);
            // A copy that left out the WALs below an idle family's in-memory advance would miss
            // WALs its MANIFEST tracks as live (refused at open).
            minLogNumberToKeep = RecordedMinLogLocked();
            return list;
        }
    }

    /// <summary>
    /// The bound a recovery of the MANIFEST as written computes (the recorded MinLogNumberToKeep or
    /// every family's recorded log number, whichever is larger): the WALs at or above it that the
    /// MANIFEST tracks must exist for it to open, so none of them may be deleted, even when
    /// <see cref="MinLogNumberToKeep"/> (which counts idle families' in-memory advances) has run
    /// ahead of it. RocksDB too deletes WALs only below the persisted bound.
    /// </summary>
    public ulong RecordedMinLogNumberToKeep
    {
        get
        {
            lock (_gate)
            {
                return RecordedMinLogLocked();
            }
        }
    }

    private ulong RecordedMinLogLocked()
    {
        ulong recordedMin = ulong.MaxValue;
        foreach (ColumnFamilyVersions f in _families.Values)
        {
            recordedMin = Math.Min(recordedMin, f.RecordedLogNumber);
        }
        return Math.Max(_persistedMinLogToKeep, recordedMin);
    }

    internal void OnVersionReleased(Version v)
    {
        lock (_gate)
        {
            _live.Remove(v);
        }
    }

    /// <summary>Releases every family's current version (at close, after the last reader) and closes the MANIFEST.</summary>
    public void Dispose()
    {
        lock (_gate)
        {
            CloseManifest();
        }
    }

    /// <summary>An edit that touches no family's files or log number (a WAL record, MinLogNumberToKeep alone).</summary>
    private static bool IsDatabaseWideOnly(VersionEdit edit) =>
        edit.NewFiles.Count == 0 && edit.DeletedFiles.Count == 0 && !edit.HasLogNumber && edit.ColumnFamilyAdd == null &&
        !edit.IsColumnFamilyDrop && edit.CompactCursors.Count == 0;

    private ulong MinFamilyLogNumber()
    {
        ulong min = ulong.MaxValue;
        foreach (ColumnFamilyVersions f in _families.Values)
        {
            min = Math.Min(min, f.LogNumber);
        }
        return min;
    }

    private ColumnFamilyVersions AddFamily(uint id, string name, Version v, ulong logNumber)
    {
        var family = new ColumnFamilyVersions(id, name, v, logNumber);
        v.Ref();
        _live.Add(v);
        _families.Add(id, family);
        return family;
    }

    /// <summary>
    /// Appends <paramref name="records"/> to the open MANIFEST, or starts a new one with a snapshot
    /// of the current state followed by the records; the last record carries the next file number
    /// (after the new MANIFEST's own); syncs once; on a new MANIFEST, points CURRENT at it. Called
    /// under <see cref="_gate"/>.
    /// </summary>
    private void Commit(IReadOnlyList<VersionEdit> records)
    {
        bool newManifest = _manifestLog == null;
        bool currentNamesNew = false;
        ulong newManifestNumber = 0;
        string? newManifestPath = null;
        if (newManifest)
        {
            newManifestNumber = _nextFileNumber++;
            newManifestPath = FileNames.ManifestFile(_dir, newManifestNumber);
            _manifestFile = _fs.CreateWritable(newManifestPath);
            _manifestLog = new LogWriter(_manifestFile);
        }
        VersionEdit last = records[^1];
        if (!IsWalRecord(last))
        {
            last.NextFileNumber = _nextFileNumber;
            if (!last.HasLastSequence)
            {
                last.LastSequence = LastSequence;
            }
        }
        try
        {
            using var buf = new ByteBuffer(512);
            if (newManifest)
            {
                WriteSnapshot(_manifestLog!, buf);
            }
            foreach (VersionEdit edit in records)
            {
                buf.Clear();
                edit.EncodeTo(buf);
                _manifestLog!.AddRecord(buf.WrittenSpan);
            }
            _manifestFile!.Sync();
            if (newManifest)
            {
                SetCurrentFile(newManifestNumber, ref currentNamesNew);
                _manifestFileNumber = newManifestNumber;
            }
            if (newManifest || !IsWalRecord(last))
            {
                // The snapshot and every record but a WAL record carry _nextFileNumber.
                _durableNextFileNumber = Math.Max(_durableNextFileNumber, _nextFileNumber);
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

    private static bool IsWalRecord(VersionEdit edit) => edit.CreatedWals.Count > 0 && IsDatabaseWideOnly(edit);

    /// <summary>
    /// The snapshot that opens a new MANIFEST: the default family in one record (comparator,
    /// files, log number and the database-wide counters, so a MANIFEST's first record always holds
    /// what an open needs); each other family in two, since RocksDB applies nothing but the
    /// creation from a ColumnFamilyAdd record; then the tracked WALs.
    /// </summary>
    private void WriteSnapshot(LogWriter log, ByteBuffer buf)
    {
        foreach (ColumnFamilyVersions family in _families.Values)
        {
            var files = new VersionEdit { Comparator = InternalKeyComparer.BytewiseComparatorName, LogNumber = family.LogNumber };
            if (family.Id == ColumnFamilyVersions.DefaultId)
            {
                if (MaxColumnFamily != 0)
                {
                    files.MaxColumnFamily = MaxColumnFamily;
                }
                files.PrevLogNumber = PrevLogNumber;
                files.NextFileNumber = _nextFileNumber;
                files.LastSequence = LastSequence;
                if (_persistedMinLogToKeep != 0)
                {
                    files.MinLogNumberToKeep = _persistedMinLogToKeep;
                }
            }
            else
            {
                Append(log, buf, new VersionEdit
                {
                    ColumnFamily = family.Id,
                    ColumnFamilyAdd = family.Name,
                    Comparator = InternalKeyComparer.BytewiseComparatorName,
                });
                files.ColumnFamily = family.Id;
            }
            Version v = family.Current;
            for (int level = 0; level < Version.NumLevels; level++)
            {
                foreach (FileMetaData f in v.Files(level))
                {
                    files.AddFile(level, f);
                }
                if (v.CompactCursor(level) is byte[] cursor)
                {
                    files.AddCompactCursor(level, cursor);
                }
            }
            Append(log, buf, files);
        }
        if (_wals.SnapshotEdit(Math.Max(_persistedMinLogToKeep, MinFamilyLogNumber())) is VersionEdit wals)
        {
            Append(log, buf, wals);
        }
        buf.Clear();
    }

    /// <summary>Encodes <paramref name="edit"/> into <paramref name="buf"/> and appends it to the MANIFEST <paramref name="log"/>.</summary>
    internal static void Append(LogWriter log, ByteBuffer buf, VersionEdit edit)
    {
        buf.Clear();
        edit.EncodeTo(buf);
        log.AddRecord(buf.WrittenSpan);
    }

    private void Install(ColumnFamilyVersions family, Version v)
    {
        v.Ref();
        _live.Add(v);
        Version old = family.Exchange(v);
        old.Unref();
    }

    /// <summary>Points CURRENT at a MANIFEST; <paramref name="renamed"/> turns true once CURRENT names it.</summary>
    private void SetCurrentFile(ulong manifestNumber, ref bool renamed)
    {
        WriteCurrentFile(_fs, _dir, manifestNumber);
        renamed = true;
        _fs.SyncDirectory(_dir);
    }

    /// <summary>Points CURRENT at MANIFEST-<paramref name="manifestNumber"/> (a synced temporary file renamed over it); the caller syncs the directory.</summary>
    internal static void WriteCurrentFile(IFileSystem fs, string dir, ulong manifestNumber)
    {
        string temp = FileNames.TempFile(dir, manifestNumber);
        using (IWritableFile f = fs.CreateWritable(temp))
        {
            f.Append(Encoding.ASCII.GetBytes(FileNames.ManifestName(manifestNumber) + "\n"));
            f.Sync();
        }
        fs.RenameFile(temp, FileNames.CurrentFile(dir));
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
