namespace KvEngine.Storage;

/// <summary>Reads a file front to back. Not thread-safe.</summary>
internal interface ISequentialFile : IDisposable
{
    /// <summary>Reads up to <paramref name="buffer"/>.Length bytes; returns 0 at end of file.</summary>
    int Read(Span<byte> buffer);

    /// <summary>Skips forward <paramref name="count"/> bytes (clamped at end of file).</summary>
    void Skip(long count);
}
