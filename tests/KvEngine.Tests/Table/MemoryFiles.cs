using KvEngine.Storage;

namespace KvEngine.Tests.Table;

/// <summary>In-memory table files for fast tests.</summary>
internal sealed class MemoryWritableFile : IWritableFile
{
    private readonly MemoryStream _stream = new();

    public long Size => _stream.Length;

    public void Append(ReadOnlySpan<byte> data) => _stream.Write(data);

    public void Flush()
    {
    }

    public void Sync()
    {
    }

    public byte[] ToArray() => _stream.ToArray();

    public void Dispose() => _stream.Dispose();
}

internal sealed class MemoryRandomAccessFile(byte[] data) : IRandomAccessFile
{
    public int Reads { get; private set; }

    public long Length => data.Length;

    public int Read(long offset, Span<byte> buffer)
    {
        Reads++;
        if (offset >= data.Length)
        {
            return 0;
        }
        int n = (int)Math.Min(buffer.Length, data.Length - offset);
        data.AsSpan((int)offset, n).CopyTo(buffer);
        return n;
    }

    public void Dispose()
    {
    }
}
