using Microsoft.Win32.SafeHandles;

namespace KvEngine.Storage;

/// <summary>Front-to-back reads on a <see cref="SafeFileHandle"/>. Not thread-safe.</summary>
internal sealed class LocalSequentialFile : ISequentialFile
{
    private readonly SafeFileHandle _handle;
    private long _position;

    public LocalSequentialFile(string path)
    {
        _handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
    }

    public int Read(Span<byte> buffer)
    {
        int n = RandomAccess.Read(_handle, buffer, _position);
        _position += n;
        return n;
    }

    public void Skip(long count)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(count);
        _position = Math.Min(_position + count, RandomAccess.GetLength(_handle));
    }

    public void Dispose() => _handle.Dispose();
}
