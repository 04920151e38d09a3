namespace KvEngine.Storage;

/// <summary>
/// One file of <see cref="FaultInjectionFileSystem"/>. Invariant: SyncedLength &lt;= OsLength &lt;=
/// total length; bytes past OsLength are in the writer's process buffer. Guarded by the file
/// system's lock.
/// </summary>
internal sealed class MemFile
{
    private byte[] _data = new byte[256];
    private int _length;

    public int OsLength { get; private set; }

    public int SyncedLength { get; private set; }

    public int Length => _length;

    public void Append(ReadOnlySpan<byte> bytes)
    {
        if (_data.Length - _length < bytes.Length)
        {
            Array.Resize(ref _data, Math.Max(_data.Length * 2, _length + bytes.Length));
        }
        bytes.CopyTo(_data.AsSpan(_length));
        _length += bytes.Length;
    }

    public void Flush() => OsLength = _length;

    /// <summary>Replaces bytes inside the file (offset + length within <see cref="Length"/>); the caller syncs.</summary>
    public void Overwrite(int offset, ReadOnlySpan<byte> bytes) => bytes.CopyTo(_data.AsSpan(offset));

    public void Sync()
    {
        OsLength = _length;
        SyncedLength = _length;
    }

    /// <summary>Cuts the file to <paramref name="length"/> (within <see cref="Length"/>), durably.</summary>
    public void Truncate(int length)
    {
        _length = length;
        OsLength = length;
        SyncedLength = length;
    }

    public void DropProcessBuffer() => _length = OsLength;

    public void DropUnsynced()
    {
        _length = SyncedLength;
        OsLength = SyncedLength;
    }

    public int Read(long offset, Span<byte> buffer)
    {
        if (offset >= OsLength)
        {
            return 0;
        }
        int n = (int)Math.Min(buffer.Length, OsLength - offset);
        _data.AsSpan((int)offset, n).CopyTo(buffer);
        return n;
    }

    public byte[] OsSnapshot() => _data.AsSpan(0, OsLength).ToArray();

    public void Replace(ReadOnlySpan<byte> content)
    {
        _data = content.ToArray();
        _length = _data.Length;
        OsLength = _length;
        SyncedLength = _length;
    }
}
