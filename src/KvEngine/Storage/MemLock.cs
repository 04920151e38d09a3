namespace KvEngine.Storage;

/// <summary>A held lock of <see cref="FaultInjectionFileSystem"/>; released on dispose or crash.</summary>
internal sealed class MemLock : IDisposable
{
    private readonly FaultInjectionFileSystem _fs;
    private readonly string _path;
    private readonly int _generation;
    private bool _released;

    public MemLock(FaultInjectionFileSystem fs, string path, int generation)
    {
        _fs = fs;
        _path = path;
        _generation = generation;
    }

    public void Dispose()
    {
        if (_released)
        {
            return;
        }
        _released = true;
        _fs.ReleaseLock(_path, _generation);
    }
}
