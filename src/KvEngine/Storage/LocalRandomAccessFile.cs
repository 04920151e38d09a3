using Microsoft.Win32.SafeHandles;

namespace KvEngine.Storage;

/// <summary>pread-style reads on a <see cref="SafeFileHandle"/>; no buffering. Thread-safe.</summary>
internal sealed class LocalRandomAccessFile : IRandomAccessFile
{
    private readonly SafeFileHandle _handle;

    public LocalRandomAccessFile(string path)
    {
        _handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
        Length = RandomAccess.GetLength(_handle);
    }

    public long Length { get; }

    public int Read(long offset, Span<byte> buffer)
    {
        int total = 0;
        while (total < buffer.Length)
        {
            int n = RandomAccess.Read(_handle, buffer[total..], offset + total);
            if (n == 0)
            {
                break;
            }
            total += n;
        }
        return total;
    }

    public void Dispose() => _handle.Dispose();
}
