namespace KvEngine.Storage;

/// <summary>Writer for a <see cref="MemFile"/>; one thread at a time.</summary>
internal sealed class MemWritableFile : IWritableFile
{
    private readonly FaultInjectionFileSystem _fs;
    private readonly MemFile _file;
    private readonly string _path;
    private readonly int _generation;
    private bool _closed;

    public MemWritableFile(FaultInjectionFileSystem fs, MemFile file, string path, int generation)
    {
        _fs = fs;
        _file = file;
        _path = path;
        _generation = generation;
    }

    public long Size
    {
        get
        {
            lock (_fs.Gate)
            {
                return _file.Length;
            }
        }
    }

    public void Append(ReadOnlySpan<byte> data)
    {
        lock (_fs.Gate)
        {
            Enter(FileOperation.Append);
            _file.Append(data);
        }
    }

    public void Flush()
    {
        lock (_fs.Gate)
        {
            Enter(FileOperation.Flush);
            _file.Flush();
        }
    }

    public void Sync()
    {
        lock (_fs.Gate)
        {
            Enter(FileOperation.Sync);
            _file.Sync();
            _fs.CountSync();
        }
    }

    public void Dispose()
    {
        lock (_fs.Gate)
        {
            if (_closed)
            {
                return;
            }
            _closed = true;
            if (_fs.Generation == _generation)
            {
                _file.Flush(); // closing a file hands its buffer to the OS, as a real close does
            }
        }
    }

    private void Enter(FileOperation op)
    {
        ObjectDisposedException.ThrowIf(_closed, this);
        _fs.CheckAlive(_generation, _path);
        _fs.Check(op, _path);
    }
}
