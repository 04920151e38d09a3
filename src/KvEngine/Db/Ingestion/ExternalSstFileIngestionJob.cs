using System.Buffers;
using KvEngine.Compaction;
using KvEngine.Db.State;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.RangeDel;
using KvEngine.Storage;
using KvEngine.Table;
using KvEngine.Versions;

namespace KvEngine.Db.Ingestion;

/// <summary>
/// Ingests external SST files into one column family, step for step as RocksDB 7.8's
/// ExternalSstFileIngestionJob: <see cref="Prepare"/> reads each file (external-file version and
/// global-seqno offset, first and last keys at sequence 0, range widened by range tombstones),
/// sorts the files and copies or hard-links them to new table numbers inside the database;
/// <see cref="NeedsFlush"/> says whether the family's memtables overlap them;
/// <see cref="Run"/> (writes stopped) picks each file's level and sequence number, writes the
/// sequence number into the file and builds the one <see cref="Edit"/> to install;
/// <see cref="Cleanup"/> deletes the database's copies after a failure, or the caller's names
/// after a successful move. Used by one thread (the ingesting caller); not thread-safe.
/// </summary>
internal sealed partial class ExternalSstFileIngestionJob
{
    private const int CopyBufferSize = 1 << 20;

    private readonly string _dir;
    private readonly IFileSystem _fs;
    private readonly ColumnFamilyData _cfd;
    private readonly IngestExternalFileOptions _options;
    private readonly List<IngestedFileInfo> _files = new();

    public ExternalSstFileIngestionJob(string dir, IFileSystem fs, ColumnFamilyData cfd, IngestExternalFileOptions options)
    {
        _dir = dir;
        _fs = fs;
        _cfd = cfd;
        _options = options;
    }

    /// <summary>The files, sorted by smallest key once prepared.</summary>
    public IReadOnlyList<IngestedFileInfo> Files => _files;

    /// <summary>Two files of the call overlap each other: every file goes to level 0 with a new sequence number.</summary>
    public bool FilesOverlap { get; private set; }

    /// <summary>The sequence numbers <see cref="Run"/> consumed (files given LastSequence + 1, + 2, ...).</summary>
    public int ConsumedSeqnoCount { get; private set; }

    /// <summary>The edit <see cref="Run"/> built: the files at their levels.</summary>
    public VersionEdit Edit { get; } = new();

    /// <summary>
    /// Reads every file (no database state involved), then copies or links each into the database
    /// under a number from <paramref name="newFileNumber"/> (which protects it from deletion),
    /// syncs the file and the directory. Throws, having deleted nothing yet (see <see cref="Cleanup"/>).
    /// </summary>
    public void Prepare(IReadOnlyList<string> paths, Func<ulong> newFileNumber)
    {
        foreach (string path in paths)
        {
            _files.Add(ReadFileInfo(path));
        }
        _files.Sort(static (a, b) => InternalKeyComparer.Compare(a.Smallest, b.Smallest));
        for (int i = 1; i < _files.Count; i++)
        {
            if (SstableKeyCompare(_files[i - 1].Largest, _files[i].Smallest) >= 0)
            {
                FilesOverlap = true;
            }
        }
        if (FilesOverlap && !_options.AllowGlobalSeqNo)
        {
            throw new InvalidOperationException(
                "Global seqno is required, but disabled (the external files' key ranges overlap each other and IngestExternalFileOptions.AllowGlobalSeqNo is false).");
        }
        foreach (IngestedFileInfo f in _files)
        {
            f.FileNumber = newFileNumber();
            f.InternalPath = FileNames.TableFile(_dir, f.FileNumber);
            bool linked = false;
            if (_options.MoveFiles)
            {
                try
                {
                    _fs.LinkFile(f.ExternalPath, f.InternalPath);
                    f.InternalFileCreated = true;
                    // RocksDB reopens the link and syncs it: the caller may never have synced the file.
                    _fs.WriteAt(f.InternalPath, 0, ReadOnlySpan<byte>.Empty);
                    linked = true;
                }
                catch (IOException) when (_options.FailedMoveFallBackToCopy && !f.InternalFileCreated)
                {
                    // Another device, or a file system without links: copy instead.
                }
            }
            if (!linked)
            {
                f.Copied = true;
                CopyFile(f);
            }
        }
        _fs.SyncDirectory(_dir);
    }

    /// <summary>
    /// After a failure: deletes every file this job created inside the database. After success
    /// with <see cref="IngestExternalFileOptions.MoveFiles"/>: deletes the caller's names (a
    /// failure to do so leaves them; the data is already in the database).
    /// </summary>
    public void Cleanup(bool succeeded)
    {
        foreach (IngestedFileInfo f in _files)
        {
            try
            {
                if (!succeeded && f.InternalFileCreated)
                {
                    _fs.DeleteFile(f.InternalPath);
                    f.InternalFileCreated = false;
                }
                else if (succeeded && _options.MoveFiles)
                {
                    _fs.DeleteFile(f.ExternalPath);
                }
            }
            catch (IOException)
            {
                // RocksDB logs and goes on: a leftover table is swept as obsolete at the next open.
            }
        }
    }

    /// <summary>RocksDB's GetIngestedFileInfo: properties, key range and checks of one file.</summary>
    private IngestedFileInfo ReadFileInfo(string path)
    {
        var f = new IngestedFileInfo(path);
        if (!_fs.FileExists(path))
        {
            throw new FileNotFoundException($"External file '{path}' does not exist.", path);
        }
        long size = _fs.GetFileSize(path);
        f.FileSize = (ulong)size;
        TableOptions readOptions = _cfd.TableOptions with { BlockCache = null, CacheIndexAndFilterBlocks = false, Statistics = null };
        using TableReader reader = TableReader.Open(_fs.OpenRandomAccess(path), size, readOptions, path);
        TableProperties props = reader.Properties;
        Dictionary<string, byte[]> user = props.UserCollected;
        if (!user.TryGetValue(TablePropertyNames.ExternalSstFileVersion, out byte[]? version))
        {
            throw new KvCorruptionException($"{path}: not an external SST file (no {TablePropertyNames.ExternalSstFileVersion} property; RocksDB: External file version not found).");
        }
        if (version.Length < 4)
        {
            throw new KvCorruptionException($"{path}: the {TablePropertyNames.ExternalSstFileVersion} property has {version.Length} bytes, not 4.");
        }
        f.Version = Util.Coding.DecodeFixed32(version);
        if (f.Version == 2)
        {
            if (!user.TryGetValue(TablePropertyNames.ExternalSstFileGlobalSeqno, out byte[]? seqno))
            {
                throw new KvCorruptionException($"{path}: external file global sequence number not found.");
            }
            if (seqno.Length < 8)
            {
                throw new KvCorruptionException($"{path}: the {TablePropertyNames.ExternalSstFileGlobalSeqno} property has {seqno.Length} bytes, not 8.");
            }
            f.OriginalSeqno = Util.Coding.DecodeFixed64(seqno);
            f.GlobalSeqnoOffset = props.ExternalSstFileGlobalSeqnoOffset;
            if (f.GlobalSeqnoOffset == 0)
            {
                throw new KvCorruptionException($"{path}: was not able to find the file's global seqno field.");
            }
        }
        else if (f.Version == 1)
        {
            if (_options.AllowBlockingFlush || _options.AllowGlobalSeqNo)
            {
                throw new ArgumentException($"{path}: external SST file version 1 does not support global seqno (set AllowBlockingFlush and AllowGlobalSeqNo to false to ingest it).");
            }
        }
        else
        {
            throw new ArgumentException($"{path}: external file version {f.Version} is not supported.");
        }
        f.NumEntries = props.NumEntries;
        f.NumRangeDeletions = props.NumRangeDeletions;
        f.ColumnFamilyId = (uint)props.ColumnFamilyId;
        if (f.ColumnFamilyId != SstFileWriter.UnknownColumnFamilyId && f.ColumnFamilyId != _cfd.Id)
        {
            throw new ArgumentException(
                $"{path}: external file column family id {f.ColumnFamilyId} does not match the target column family '{_cfd.Name}' (id {_cfd.Id}).");
        }
        if (_options.VerifyChecksumsBeforeIngest)
        {
            using InternalIterator all = reader.NewIterator(verifyChecksums: true, fillCache: false);
            for (all.SeekToFirst(); all.Valid; all.Next())
            {
            }
        }
        ReadKeyRange(reader, f, path);
        if (f.NumEntries == 0 && f.NumRangeDeletions == 0)
        {
            throw new ArgumentException($"{path}: the file contains no entries.");
        }
        if (f.Smallest.Length == 0 || f.Largest.Length == 0)
        {
            throw new KvCorruptionException($"{path}: the properties count {f.NumEntries} entries and {f.NumRangeDeletions} range deletions, but the file holds none.");
        }
        return f;
    }

    /// <summary>First and last point keys (which must have sequence 0), widened by the range tombstones.</summary>
    private static void ReadKeyRange(TableReader reader, IngestedFileInfo f, string path)
    {
        bool boundsSet = false;
        using (InternalIterator it = reader.NewIterator(verifyChecksums: true, fillCache: false))
        {
            it.SeekToFirst();
            if (it.Valid)
            {
                f.Smallest = CheckedKey(it.Key, path);
                it.SeekToLast();
                f.Largest = CheckedKey(it.Key, path);
                boundsSet = true;
            }
        }
        using InternalIterator? tombstones = reader.NewRangeTombstoneIterator();
        if (tombstones == null)
        {
            return;
        }
        for (tombstones.SeekToFirst(); tombstones.Valid; tombstones.Next())
        {
            byte[] start = CheckedKey(tombstones.Key, path);
            byte[] end = RangeTombstoneWriter.Sentinel(tombstones.Value);
            if (!boundsSet || SstableKeyCompare(start, f.Smallest) < 0)
            {
                f.Smallest = start;
            }
            if (!boundsSet || SstableKeyCompare(end, f.Largest) > 0)
            {
                f.Largest = end;
            }
            boundsSet = true;
        }
    }

    /// <summary>
    /// RocksDB's sstableKeyCompare for file boundaries: by user key; at one user key a range
    /// tombstone's sentinel end sorts first and any other two keys are equal (so two files
    /// sharing a boundary user key overlap).
    /// </summary>
    internal static int SstableKeyCompare(ReadOnlySpan<byte> a, ReadOnlySpan<byte> b)
    {
        int c = InternalKeys.UserKey(a).SequenceCompareTo(InternalKeys.UserKey(b));
        if (c != 0)
        {
            return c;
        }
        bool aSentinel = FileBounds.IsSentinel(a);
        bool bSentinel = FileBounds.IsSentinel(b);
        return aSentinel == bSentinel ? 0 : aSentinel ? -1 : 1;
    }

    private static byte[] CheckedKey(ReadOnlySpan<byte> key, string path)
    {
        if (!InternalKeys.IsValid(key))
        {
            throw new KvCorruptionException($"{path}: corrupted key in external file.");
        }
        if (InternalKeys.Sequence(key) != 0)
        {
            throw new KvCorruptionException($"{path}: external file has non zero sequence number ({InternalKeys.Sequence(key)}).");
        }
        return key.ToArray();
    }

    /// <summary>Copies the caller's file to its new name and syncs it (RocksDB's CopyFile with sync).</summary>
    private void CopyFile(IngestedFileInfo f)
    {
        using IRandomAccessFile source = _fs.OpenRandomAccess(f.ExternalPath);
        IWritableFile target = _fs.CreateWritable(f.InternalPath);
        f.InternalFileCreated = true;
        byte[] buffer = ArrayPool<byte>.Shared.Rent(CopyBufferSize);
        try
        {
            long offset = 0;
            long size = (long)f.FileSize;
            while (offset < size)
            {
                int want = (int)Math.Min(buffer.Length, size - offset);
                int n = source.Read(offset, buffer.AsSpan(0, want));
                if (n <= 0)
                {
                    throw new IOException($"External file '{f.ExternalPath}' shrank while being copied ({offset} of {size} bytes read).");
                }
                target.Append(buffer.AsSpan(0, n));
                offset += n;
            }
            target.Sync();
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
            target.Dispose();
        }
    }
}
