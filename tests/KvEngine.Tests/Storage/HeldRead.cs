namespace KvEngine.Tests.Storage;

/// <summary>An asynchronous read <see cref="CountingFileSystem.BeforeAsyncRead"/> may hold: where it reads, into what, and its token.</summary>
internal sealed record HeldRead(string Path, long Offset, Memory<byte> Destination, CancellationToken CancellationToken);
