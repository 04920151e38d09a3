using KvEngine.Storage;

namespace KvEngine.Tests.Wal;

/// <summary>An <see cref="IWritableFile"/> over a growable array, counting flushes and syncs.</summary>
internal sealed class InMemoryWritableFile : IWritableFile
{
    private readonly MemoryStream _data = new();

    public long Size => _data.Length;

    public int FlushCount { get; private set; }

    public int SyncCount { get; private set; }

    public byte[] ToArray() => _data.ToArray();

    public void Append(ReadOnlySpan<byte> data) => _data.Write(data);

    public void Flush() => FlushCount++;

    public void Sync() => SyncCount++;

    public void Dispose() => _data.Dispose();
}
