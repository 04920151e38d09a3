namespace KvEngine.Versions;

/// <summary>Garbage accounted to a blob file (RocksDB db/blob/blob_file_garbage.h). Immutable.</summary>
internal sealed record BlobFileGarbage(ulong BlobFileNumber, ulong GarbageBlobCount, ulong GarbageBlobBytes);
