using System.Collections.Concurrent;
using KvEngine.Storage;
using KvEngine.Table;

namespace KvEngine.Versions;

/// <summary>
/// Open table readers by file number. A reader is opened on first use and kept until its file
/// becomes obsolete (<see cref="Evict"/>), which happens only once no version references the file,
/// so no reader in use is ever closed. Lookups on a hit are lock-free; opening takes a lock so a
/// file is opened once. Opening fragments the table's range tombstones once, clipped to the file's
/// boundaries (<see cref="FileBounds"/>).
/// With max_open_files set, an <see cref="OpenFileLimiter"/> closes idle readers' files beyond the
/// bound (readers stay; their next read reopens the file).
/// </summary>
internal sealed class TableCache : IDisposable
{
    private readonly string _dir;
    private readonly IFileSystem _fs;
    private readonly TableOptions _options;
    private readonly ConcurrentDictionary<ulong, TableReader> _readers = new();
    private readonly object _openGate = new();

    private readonly KvStatistics? _stats;
    private readonly OpenFileLimiter? _limiter;

    /// <summary>
    /// <paramref name="maxOpenFiles"/> is RocksDB's max_open_files: -1 keeps every table file open;
    /// otherwise (raised to at least 20, as RocksDB does) at most maxOpenFiles - 10 table files stay
    /// open while idle (10 are left for the WAL, MANIFEST and others, as RocksDB reserves).
    /// </summary>
    public TableCache(string dir, IFileSystem fs, TableOptions options, KvStatistics? stats, int maxOpenFiles = -1)
        : this(dir, fs, options, stats, NewLimiter(fs, maxOpenFiles))
    {
    }

    /// <summary>A cache whose files count against <paramref name="limiter"/>, which several caches (one per column family) may share.</summary>
    public TableCache(string dir, IFileSystem fs, TableOptions options, KvStatistics? stats, OpenFileLimiter? limiter)
    {
        _dir = dir;
        _fs = fs;
        _options = options;
        _stats = stats;
        _limiter = limiter;
    }

    /// <summary>RocksDB's max_open_files as a limiter: null for -1 (all open).</summary>
    public static OpenFileLimiter? NewLimiter(IFileSystem fs, int maxOpenFiles, bool useDirectReads = false, bool adviseRandom = false) =>
        maxOpenFiles == -1 ? null : new OpenFileLimiter(Math.Max(maxOpenFiles, 20) - 10, path => fs.OpenRandomAccess(path, useDirectReads, adviseRandom));

    /// <summary>Table files open now (without a limit: the readers' count; with one, every cache sharing the limiter).</summary>
    public int OpenFiles => _limiter?.OpenFiles ?? _readers.Count;

    public int Count => _readers.Count;

    /// <summary>
    /// Bytes the open readers hold outside the block cache (<see cref="TableReader.ApproximateMemoryUsage"/>
    /// summed; RocksDB's <c>rocksdb.estimate-table-readers-mem</c>). A snapshot: readers opened or
    /// evicted meanwhile may or may not be counted.
    /// </summary>
    public long ApproximateReadersMemory()
    {
        long bytes = 0;
        foreach (KeyValuePair<ulong, TableReader> e in _readers)
        {
            bytes += e.Value.ApproximateMemoryUsage;
        }
        return bytes;
    }

    /// <summary>
    /// The reader of <paramref name="file"/>, opened on first use. <paramref name="level"/> is the
    /// file's level when the caller knows it (-1 otherwise): a level-0 table opened here pins its
    /// cached index and filter under PinL0FilterAndIndexBlocksInCache.
    /// </summary>
    public TableReader Get(FileMetaData file, int level = -1)
    {
        if (_readers.TryGetValue(file.Number, out TableReader? reader))
        {
            if (!file.RangeTombstonesKnown) // a FileMetaData the reader was not opened through
            {
                file.RecordRangeTombstones(reader.RangeTombstones is { IsEmpty: false });
            }
            return reader;
        }
        lock (_openGate)
        {
            if (_readers.TryGetValue(file.Number, out reader))
            {
                return reader;
            }
            string path = FileNames.TableFile(_dir, file.Number);
            IRandomAccessFile f;
            try
            {
                f = _fs.OpenRandomAccess(path, _options.UseDirectReads, _options.AdviseRandomOnOpen);
            }
            catch (FileNotFoundException e)
            {
                throw new KvCorruptionException($"Table file {path} named by the MANIFEST is missing.", e);
            }
            try
            {
                reader = TableReader.Open(f, (long)file.FileSize, _options, path, maybeFlushed: level == 0 && (long)file.FileSize <= _options.MaxFileSizeForL0MetaPin, _limiter,
                    largestSequence: file.LargestSeqno);
            }
            catch
            {
                f.Dispose();
                throw;
            }
            try
            {
                Merge.MergeOperatorCheck.ThrowIfIncompatible(reader.Properties, _options.MergeOperatorName, path);
                FileBounds.RangeTombstoneClip(file, out byte[] lower, out byte[] upper);
                reader.LoadRangeTombstones(lower, upper);
            }
            catch
            {
                reader.Dispose();
                throw;
            }
            file.RecordRangeTombstones(reader.RangeTombstones is { IsEmpty: false });
            _readers[file.Number] = reader;
            _stats?.Record(Ticker.NoFileOpens);
            return reader;
        }
    }

    /// <summary>The reader of <paramref name="file"/> if it is already open (no I/O; KeyMayExist).</summary>
    public bool TryGetOpen(FileMetaData file, [System.Diagnostics.CodeAnalysis.NotNullWhen(true)] out TableReader? reader) =>
        _readers.TryGetValue(file.Number, out reader);

    public void Evict(ulong fileNumber)
    {
        if (_readers.TryRemove(fileNumber, out TableReader? reader))
        {
            reader.Dispose();
        }
    }

    public void Dispose()
    {
        foreach (KeyValuePair<ulong, TableReader> e in _readers)
        {
            e.Value.Dispose();
        }
        _readers.Clear();
    }
}
