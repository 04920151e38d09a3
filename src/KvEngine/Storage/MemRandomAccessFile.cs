namespace KvEngine.Storage;

/// <summary>Positional reader for a <see cref="MemFile"/>; thread-safe through the file system lock.</summary>
internal sealed class MemRandomAccessFile : IRandomAccessFile
{
    private readonly FaultInjectionFileSystem _fs;
    private readonly MemFile _file;
    private readonly string _path;
    private readonly int _generation;

    public MemRandomAccessFile(FaultInjectionFileSystem fs, MemFile file, string path, int generation)
    {
        _fs = fs;
        _file = file;
        _path = path;
        _generation = generation;
        Length = file.OsLength;
    }

    public long Length { get; }

    public int Read(long offset, Span<byte> buffer)
    {
        lock (_fs.Gate)
        {
            _fs.CheckAlive(_generation, _path);
            _fs.Check(FileOperation.Read, _path);
            return _file.Read(offset, buffer);
        }
    }

    public void Dispose()
    {
    }
}
