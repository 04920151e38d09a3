namespace KvEngine;

/// <summary>What <see cref="KvDb.GetApproximateSizes(IReadOnlyList{KeyRange}, SizeApproximationFlags)"/> counts (RocksDB's DB::SizeApproximationFlags).</summary>
[Flags]
public enum SizeApproximationFlags
{
    /// <summary>Nothing: not a valid request.</summary>
    None = 0,

    /// <summary>The bytes of the range's entries in the memtables.</summary>
    IncludeMemtables = 1,

    /// <summary>The bytes the range takes in the table files.</summary>
    IncludeFiles = 2,
}
