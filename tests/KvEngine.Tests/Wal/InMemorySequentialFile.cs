using KvEngine.Storage;

namespace KvEngine.Tests.Wal;

/// <summary>An <see cref="ISequentialFile"/> over an array; reads return at most maxRead bytes.</summary>
internal sealed class InMemorySequentialFile : ISequentialFile
{
    private readonly byte[] _data;
    private readonly int _maxRead;
    private long _position;

    public InMemorySequentialFile(byte[] data, int maxRead = int.MaxValue)
    {
        _data = data;
        _maxRead = maxRead;
    }

    public int Read(Span<byte> buffer)
    {
        int n = (int)Math.Min(Math.Min(buffer.Length, _maxRead), _data.Length - _position);
        _data.AsSpan((int)_position, n).CopyTo(buffer);
        _position += n;
        return n;
    }

    public void Skip(long count) => _position = Math.Min(_position + count, _data.Length);

    public void Dispose()
    {
    }
}
