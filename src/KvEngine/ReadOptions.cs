namespace KvEngine;

/// <summary>Options for reads and iterators (RocksDB's ReadOptions).</summary>
public sealed class ReadOptions
{
    internal static readonly ReadOptions Default = new();

    /// <summary>Read as of this snapshot; null reads the latest state.</summary>
    public Snapshot? Snapshot { get; set; }

    /// <summary>Verify the checksum of every data block read from a table (true, as in RocksDB).</summary>
    public bool VerifyChecksums { get; set; } = true;

    /// <summary>Insert the blocks this read loads into the block cache (true, as in RocksDB); false still uses cached blocks.</summary>
    public bool FillCache { get; set; } = true;

    /// <summary>Iterators stop before keys smaller than this (inclusive lower bound); null: none.</summary>
    public byte[]? IterateLowerBound { get; set; }

    /// <summary>Iterators stop at keys greater than or equal to this (exclusive upper bound); null: none.</summary>
    public byte[]? IterateUpperBound { get; set; }
}
