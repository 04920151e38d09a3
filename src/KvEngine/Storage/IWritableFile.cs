namespace KvEngine.Storage;

/// <summary>
/// An append-only file. <see cref="Append"/> may buffer in the process; <see cref="Flush"/> hands
/// everything appended to the operating system (survives a process kill); <see cref="Sync"/> also
/// makes it durable on the device (survives power loss). Not thread-safe.
/// </summary>
internal interface IWritableFile : IDisposable
{
    void Append(ReadOnlySpan<byte> data);

    void Flush();

    void Sync();

    /// <summary>Bytes appended so far, buffered or not.</summary>
    long Size { get; }
}
