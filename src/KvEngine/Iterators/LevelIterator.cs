using System.Diagnostics;
using KvEngine.Format;

namespace KvEngine.Iterators;

/// <summary>
/// Concatenates the files of a sorted run whose key ranges do not overlap (one LSM level above 0),
/// in the style of RocksDB's LevelIterator / LevelDB's two-level "concatenating iterator".
/// <para>
/// Invariants: file i covers internal keys [smallest[i], largest[i]] and largest[i] &lt;
/// smallest[i + 1]. At most one file iterator is open at a time: the file of the current position
/// (or the last one tried); it is opened lazily through the factory, reused while the position stays
/// in that file, and disposed when the position moves to another file or off the run. A file that
/// yields no entry is skipped in either direction. Valid only while the open file iterator is.
/// </para>
/// <para>
/// Seek and SeekForPrev binary-search the files by largest key, O(log files) comparisons, and open
/// at most the files they actually visit. Exceptions from the factory or a file iterator propagate;
/// the iterator is then not Valid. Owns the open file iterator; not the factory or the key arrays
/// (which must not change while it is in use). Not thread-safe.
/// </para>
/// </summary>
internal sealed class LevelIterator : InternalIterator
{
    private readonly byte[][] _smallest;
    private readonly byte[][] _largest;
    private readonly ITableIteratorFactory _factory;
    private readonly KvPrefixExtractor? _prefixSeek;
    private int _fileIndex = -1;
    private InternalIterator? _file;
    private bool _disposed;

    /// <param name="smallest">Smallest internal key of each file, in run order.</param>
    /// <param name="largest">Largest internal key of each file, in run order.</param>
    /// <param name="factory">Opens file i's iterator.</param>
    /// <param name="prefixSeek">
    /// Prefix-seek mode (RocksDB's LevelIterator with a prefix extractor and no total order seek):
    /// when a Seek to an in-domain target had to move past the file it landed in (its prefix filter
    /// excluded the target, or nothing was left in it), the run is not Valid unless the next file's
    /// first key shares the target's prefix. Null: total order.
    /// </param>
    public LevelIterator(byte[][] smallest, byte[][] largest, ITableIteratorFactory factory, KvPrefixExtractor? prefixSeek = null)
    {
        ArgumentNullException.ThrowIfNull(smallest);
        ArgumentNullException.ThrowIfNull(largest);
        ArgumentNullException.ThrowIfNull(factory);
        if (smallest.Length != largest.Length)
        {
            throw new ArgumentException("smallest and largest must describe the same number of files.", nameof(largest));
        }
        for (int i = 0; i < smallest.Length; i++)
        {
            if (smallest[i] is null || largest[i] is null
                || smallest[i].Length < InternalKeys.TrailerSize || largest[i].Length < InternalKeys.TrailerSize)
            {
                throw new ArgumentException($"File {i} lacks a well-formed smallest or largest internal key.", nameof(smallest));
            }
            Debug.Assert(InternalKeyComparer.Compare(smallest[i], largest[i]) <= 0, "a file's smallest key exceeds its largest");
            Debug.Assert(i == 0 || InternalKeyComparer.Compare(largest[i - 1], smallest[i]) < 0, "files overlap or are out of order");
        }
        _smallest = smallest;
        _largest = largest;
        _factory = factory;
        _prefixSeek = prefixSeek;
    }

    public int FileCount => _smallest.Length;

    /// <summary>Index of the file the iterator is positioned in, or -1.</summary>
    public int CurrentFileIndex => _file is null ? -1 : _fileIndex;

    public override bool Valid => _file is not null && _file.Valid;

    public override ReadOnlySpan<byte> Key => CurrentFile.Key;

    public override ReadOnlySpan<byte> Value => CurrentFile.Value;

    private InternalIterator CurrentFile =>
        _file is not null && _file.Valid ? _file : throw new InvalidOperationException("The iterator is not positioned on an entry.");

    public override void SeekToFirst()
    {
        ThrowIfDisposed();
        Run(Mode.First, default);
    }

    public override void SeekToLast()
    {
        ThrowIfDisposed();
        Run(Mode.Last, default);
    }

    public override void Seek(ReadOnlySpan<byte> target)
    {
        ThrowIfDisposed();
        Run(Mode.Seek, target);
    }

    public override void SeekForPrev(ReadOnlySpan<byte> target)
    {
        ThrowIfDisposed();
        Run(Mode.SeekForPrev, target);
    }

    public override void Next()
    {
        InternalIterator file = CurrentFile;
        try
        {
            file.Next();
            SkipEmptyFilesForward();
        }
        catch
        {
            CloseFile();
            throw;
        }
    }

    public override void Prev()
    {
        InternalIterator file = CurrentFile;
        try
        {
            file.Prev();
            SkipEmptyFilesBackward();
        }
        catch
        {
            CloseFile();
            throw;
        }
    }

    /// <summary>
    /// False only when no file's key range covers <paramref name="userKey"/> or the filter of every
    /// file that does proves it absent. Leaves the position as it was.
    /// </summary>
    public override bool MayContainUserKey(ReadOnlySpan<byte> userKey)
    {
        ThrowIfDisposed();
        // The first file whose largest user key is >= userKey, then every file starting at or before it.
        int lo = 0;
        int hi = _largest.Length;
        while (lo < hi)
        {
            int mid = (int)((uint)(lo + hi) >> 1);
            if (InternalKeys.UserKey(_largest[mid]).SequenceCompareTo(userKey) < 0)
            {
                lo = mid + 1;
            }
            else
            {
                hi = mid;
            }
        }
        for (int f = lo; f < _smallest.Length && InternalKeys.UserKey(_smallest[f]).SequenceCompareTo(userKey) <= 0; f++)
        {
            if (_factory.KeyMayMatch(f, userKey))
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>Closes the open file iterator (reopened at the next positioning); not Valid afterwards.</summary>
    public override void Unpin() => CloseFile();

    protected override void Dispose(bool disposing)
    {
        if (_disposed)
        {
            return;
        }
        _disposed = true;
        if (disposing)
        {
            CloseFile();
        }
    }

    private enum Mode
    {
        First,
        Last,
        Seek,
        SeekForPrev,
    }

    private void Run(Mode mode, ReadOnlySpan<byte> target)
    {
        try
        {
            switch (mode)
            {
                case Mode.First:
                    if (OpenFile(0))
                    {
                        _file!.SeekToFirst();
                        SkipEmptyFilesForward();
                    }
                    break;
                case Mode.Last:
                    if (OpenFile(_smallest.Length - 1))
                    {
                        _file!.SeekToLast();
                        SkipEmptyFilesBackward();
                    }
                    break;
                case Mode.Seek:
                    if (OpenFile(FindFile(target)))
                    {
                        _file!.Seek(target);
                        bool skipped = !_file.Valid;
                        SkipEmptyFilesForward();
                        if (skipped && _prefixSeek != null && Valid && !SamePrefix(_prefixSeek, target, _file.Key))
                        {
                            CloseFile(); // keys of the target's prefix are exhausted: invalid rather than any later key
                        }
                    }
                    break;
                default:
                    int index = FindFile(target);
                    if (index == _smallest.Length
                        || InternalKeyComparer.Compare(_smallest[index], target) > 0)
                    {
                        // Every entry of file `index` is after the target: the answer is in an earlier file.
                        index--;
                    }
                    if (OpenFile(index))
                    {
                        _file!.SeekForPrev(target);
                        SkipEmptyFilesBackward();
                    }
                    break;
            }
        }
        catch
        {
            CloseFile();
            throw;
        }
    }

    // RocksDB's check after a prefix seek skipped a file: the target is in the domain, and the key is
    // in it with the same prefix.
    private static bool SamePrefix(KvPrefixExtractor extractor, ReadOnlySpan<byte> target, ReadOnlySpan<byte> key)
    {
        ReadOnlySpan<byte> targetUser = InternalKeys.UserKey(target);
        if (!extractor.InDomain(targetUser))
        {
            return true;
        }
        ReadOnlySpan<byte> keyUser = InternalKeys.UserKey(key);
        return extractor.InDomain(keyUser) && extractor.Transform(targetUser).SequenceEqual(extractor.Transform(keyUser));
    }

    // Index of the first file whose largest key is >= target, or FileCount.
    private int FindFile(ReadOnlySpan<byte> target)
    {
        int lo = 0;
        int hi = _largest.Length;
        while (lo < hi)
        {
            int mid = (int)((uint)(lo + hi) >> 1);
            if (InternalKeyComparer.Compare(_largest[mid], target) < 0)
            {
                lo = mid + 1;
            }
            else
            {
                hi = mid;
            }
        }
        return lo;
    }

    private void SkipEmptyFilesForward()
    {
        while (_file is not null && !_file.Valid)
        {
            if (_fileIndex + 1 >= _smallest.Length)
            {
                CloseFile();
                return;
            }
            OpenFile(_fileIndex + 1);
            _file!.SeekToFirst();
        }
    }

    private void SkipEmptyFilesBackward()
    {
        while (_file is not null && !_file.Valid)
        {
            if (_fileIndex <= 0)
            {
                CloseFile();
                return;
            }
            OpenFile(_fileIndex - 1);
            _file!.SeekToLast();
        }
    }

    // Makes file `index` the open one (reusing it if already open). Returns false, with no file open,
    // when index is outside the run.
    private bool OpenFile(int index)
    {
        if (index < 0 || index >= _smallest.Length)
        {
            CloseFile();
            return false;
        }
        if (_file is not null && _fileIndex == index)
        {
            return true;
        }
        CloseFile();
        _file = _factory.Open(index) ?? throw new InvalidOperationException($"The table iterator factory returned null for file {index}.");
        _fileIndex = index;
        return true;
    }

    private void CloseFile()
    {
        InternalIterator? file = _file;
        _file = null;
        _fileIndex = -1;
        file?.Dispose();
    }

    private void ThrowIfDisposed() => ObjectDisposedException.ThrowIf(_disposed, this);
}
