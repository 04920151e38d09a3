namespace KvEngine.Storage;

/// <summary>Sequential reader for a <see cref="MemFile"/>; one thread at a time.</summary>
internal sealed class MemSequentialFile : ISequentialFile
{
    private readonly FaultInjectionFileSystem _fs;
    private readonly MemFile _file;
    private readonly string _path;
    private readonly int _generation;
    private long _position;

    public MemSequentialFile(FaultInjectionFileSystem fs, MemFile file, string path, int generation)
    {
        _fs = fs;
        _file = file;
        _path = path;
        _generation = generation;
    }

    public int Read(Span<byte> buffer)
    {
        lock (_fs.Gate)
        {
            _fs.CheckAlive(_generation, _path);
            _fs.Check(FileOperation.Read, _path);
            int n = _file.Read(_position, buffer);
            _position += n;
            return n;
        }
    }

    public void Skip(long count)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(count);
        lock (_fs.Gate)
        {
            _position = Math.Min(_position + count, _file.OsLength);
        }
    }

    public void Dispose()
    {
    }
}
