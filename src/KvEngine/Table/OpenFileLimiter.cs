using KvEngine.Storage;

namespace KvEngine.Table;

/// <summary>
/// Bounds the table files held open (RocksDB's max_open_files). Table readers register here; when
/// more than <see cref="Limit"/> files are open, the least recently used reader whose file no read
/// is using closes it (its index, filter and properties stay; the next read reopens the file
/// through <see cref="Reopen"/>). A reader whose file is in use is skipped, so the bound can be
/// exceeded by the files being read at that moment. Thread-safe (one lock; taken only when a file
/// is opened or a reader comes and goes, never on a read).
/// </summary>
internal sealed class OpenFileLimiter
{
    private readonly List<TableReader> _readers = new();
    private readonly Func<string, IRandomAccessFile> _open;
    private int _openFiles;

    /// <param name="limit">Files kept open at most (while none is being read).</param>
    /// <param name="open">Opens a table file by name (the reader's <see cref="TableReader.FileName"/>).</param>
    public OpenFileLimiter(int limit, Func<string, IRandomAccessFile> open)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(limit, 1);
        Limit = limit;
        _open = open;
    }

    public int Limit { get; }

    public int OpenFiles => Volatile.Read(ref _openFiles);

    /// <summary>Counts in a reader whose file is open.</summary>
    public void Register(TableReader reader)
    {
        lock (_readers)
        {
            _readers.Add(reader);
            _openFiles++;
            EvictIdle(reader);
        }
    }

    public void Unregister(TableReader reader, bool fileWasOpen)
    {
        lock (_readers)
        {
            _readers.Remove(reader);
            if (fileWasOpen)
            {
                _openFiles--;
            }
        }
    }

    /// <summary>Opens <paramref name="reader"/>'s file again (called under the reader's file gate).</summary>
    public IRandomAccessFile Reopen(TableReader reader)
    {
        IRandomAccessFile file = _open(reader.FileName);
        lock (_readers)
        {
            _openFiles++;
            EvictIdle(reader);
        }
        return file;
    }

    private void EvictIdle(TableReader keep)
    {
        while (_openFiles > Limit)
        {
            TableReader? victim = null;
            foreach (TableReader r in _readers)
            {
                if (r != keep && r.FileIsOpen && (victim == null || r.LastFileUse < victim.LastFileUse))
                {
                    victim = r;
                }
            }
            if (victim == null || !victim.TryCloseFile())
            {
                return; // every other open file is being read right now
            }
            _openFiles--;
        }
    }
}
