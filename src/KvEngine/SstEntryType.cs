namespace KvEngine;

/// <summary>
/// The kind of one entry stored in a table (the type byte of RocksDB's internal key, with
/// RocksDB's numbers, which sst_dump prints as <c>type:N</c>).
/// </summary>
public enum SstEntryType : byte
{
    /// <summary>A point deletion (RocksDB's kTypeDeletion).</summary>
    Deletion = 0x0,

    /// <summary>A value (kTypeValue).</summary>
    Value = 0x1,

    /// <summary>A merge operand (kTypeMerge).</summary>
    Merge = 0x2,

    /// <summary>A single deletion (kTypeSingleDeletion).</summary>
    SingleDeletion = 0x7,

    /// <summary>A range deletion of [key, value) (kTypeRangeDeletion); stored apart from the point entries.</summary>
    RangeDeletion = 0xF,
}
