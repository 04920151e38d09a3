namespace KvEngine;

/// <summary>
/// One live table as a MANIFEST records it (what <c>ldb manifest_dump</c> prints per file):
/// number, size, sequence range and key range (smallest and largest internal keys, split into
/// user key, sequence number and type). Immutable.
/// </summary>
public sealed class ManifestTableInfo
{
    internal ManifestTableInfo(Versions.FileMetaData f)
    {
        FileNumber = f.Number;
        FileSize = f.FileSize;
        SmallestSequence = f.SmallestSeqno;
        LargestSequence = f.LargestSeqno;
        SmallestKey = Format.InternalKeys.UserKey(f.Smallest).ToArray();
        SmallestKeySequence = Format.InternalKeys.Sequence(f.Smallest);
        SmallestKeyType = (SstEntryType)(byte)Format.InternalKeys.Type(f.Smallest);
        LargestKey = Format.InternalKeys.UserKey(f.Largest).ToArray();
        LargestKeySequence = Format.InternalKeys.Sequence(f.Largest);
        LargestKeyType = (SstEntryType)(byte)Format.InternalKeys.Type(f.Largest);
        OldestBlobFileNumber = f.OldestBlobFileNumber;
    }

    /// <summary>The table's file number (its name is the number, six digits at least, and ".sst").</summary>
    public ulong FileNumber { get; }

    /// <summary>The table's size in bytes.</summary>
    public ulong FileSize { get; }

    /// <summary>The smallest sequence number in the table.</summary>
    public ulong SmallestSequence { get; }

    /// <summary>The largest sequence number in the table.</summary>
    public ulong LargestSequence { get; }

    /// <summary>The user key of the table's smallest entry.</summary>
    public ReadOnlyMemory<byte> SmallestKey { get; }

    /// <summary>The sequence number of the smallest entry.</summary>
    public ulong SmallestKeySequence { get; }

    /// <summary>The type of the smallest entry.</summary>
    public SstEntryType SmallestKeyType { get; }

    /// <summary>The user key of the table's largest entry.</summary>
    public ReadOnlyMemory<byte> LargestKey { get; }

    /// <summary>The sequence number of the largest entry.</summary>
    public ulong LargestKeySequence { get; }

    /// <summary>The type of the largest entry.</summary>
    public SstEntryType LargestKeyType { get; }

    /// <summary>The oldest blob file the table refers to; 0 when none.</summary>
    public ulong OldestBlobFileNumber { get; }
}
