namespace KvEngine;

/// <summary>
/// A live write-ahead log file (RocksDB's LogFile, from <see cref="KvDb.GetSortedWalFiles"/>):
/// its name relative to the database directory, number, first sequence number and size. A value
/// captured at one moment; the size of the WAL being written grows afterwards.
/// </summary>
public sealed class WalFileInfo
{
    internal WalFileInfo(string pathName, ulong logNumber, ulong startSequence, long sizeBytes)
    {
        PathName = pathName;
        LogNumber = logNumber;
        StartSequence = startSequence;
        SizeBytes = sizeBytes;
    }

    /// <summary>The name relative to the database directory, with a leading '/' (e.g. "/000012.log").</summary>
    public string PathName { get; }

    /// <summary>The WAL's file number.</summary>
    public ulong LogNumber { get; }

    /// <summary>The sequence number of its first write batch; 0 when it holds none yet.</summary>
    public ulong StartSequence { get; }

    /// <summary>Its size in bytes when listed.</summary>
    public long SizeBytes { get; }
}
