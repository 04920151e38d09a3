
namespace KvEngine;

/// <summary>
/// What <see cref="SstFileWriter.Finish"/> wrote (RocksDB's ExternalSstFileInfo): the file, its
/// key range, entry counts and size. Immutable.
/// </summary>
public sealed class ExternalSstFileInfo
{
    internal ExternalSstFileInfo(string filePath, byte[] smallestKey, byte[] largestKey, byte[] smallestRangeDelKey, byte[] largestRangeDelKey,
        long numEntries, long numRangeDelEntries, long fileSize)
    {
        FilePath = filePath;
        SmallestKey = smallestKey;
        LargestKey = largestKey;
        SmallestRangeDelKey = smallestRangeDelKey;
        LargestRangeDelKey = largestRangeDelKey;
        NumEntries = numEntries;
        NumRangeDelEntries = numRangeDelEntries;
        FileSize = fileSize;
    }

    /// <summary>The file's path, as given to <see cref="SstFileWriter.Open"/>.</summary>
    public string FilePath { get; }

    /// <summary>The smallest user key of a Put or Delete (empty when the file holds only range deletions).</summary>
    public ReadOnlyMemory<byte> SmallestKey { get; }

    /// <summary>The largest user key of a Put or Delete (empty when the file holds only range deletions).</summary>
    public ReadOnlyMemory<byte> LargestKey { get; }

    /// <summary>The smallest begin key of a range deletion (empty when there is none).</summary>
    public ReadOnlyMemory<byte> SmallestRangeDelKey { get; }

    /// <summary>The largest end key (exclusive) of a range deletion (empty when there is none).</summary>
    public ReadOnlyMemory<byte> LargestRangeDelKey { get; }

    /// <summary>The sequence number of every entry: 0, as in every file SstFileWriter writes (ingestion assigns one).</summary>
    public ulong SequenceNumber => 0;

    /// <summary>Puts and Deletes written.</summary>
    public long NumEntries { get; }

    /// <summary>Range deletions written.</summary>
    public long NumRangeDelEntries { get; }

    /// <summary>The file's size in bytes.</summary>
    public long FileSize { get; }

    /// <summary>The external-file format version (2, RocksDB's rocksdb.external_sst_file.version).</summary>
    public int Version => 2;
}
