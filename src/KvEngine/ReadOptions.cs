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

    /// <summary>
    /// With a <see cref="ColumnFamilyOptions.PrefixExtractor"/>: an iterator positioned by Seek or
    /// SeekForPrev on a key in the extractor's domain stays within that key's prefix, becoming
    /// invalid past it (RocksDB: prefix_same_as_start; false). SeekToFirst and SeekToLast confine it
    /// to the prefix of the key they find, as RocksDB does.
    /// </summary>
    public bool PrefixSameAsStart { get; set; }

    /// <summary>
    /// Ignore prefix filters in iterators: every Seek sees all tables, in total key order (RocksDB:
    /// total_order_seek; false). Without it, and with a prefix extractor, Seek skips tables whose
    /// filter excludes the target's prefix, so keys outside that prefix may be missing from the
    /// iteration (RocksDB's prefix-seek mode).
    /// </summary>
    public bool TotalOrderSeek { get; set; }

    /// <summary>
    /// Iterators read ahead asynchronously (RocksDB: async_io; false). Once an iterator reads a
    /// table's blocks in file order and its automatic readahead starts (from the third sequential
    /// block, 8 KiB doubling to 256 KiB), the range after each readahead buffer is read on the I/O
    /// engine (io_uring where the kernel allows it, else the thread pool) while the cursor walks the
    /// current one, so the cursor finds the next blocks in memory instead of waiting for the device;
    /// a block the cursor reaches while its read is still in flight is waited for, not read twice.
    /// Works with buffered and direct reads (<see cref="KvOptions.UseDirectReads"/>); costs two
    /// buffers of at most 256 KiB per table iterator. Results are the same as without it.
    /// Database iterators (<see cref="KvDb.NewIterator(ReadOptions?)"/>) use it; point reads,
    /// <see cref="SstFileReader"/>'s iterators and <see cref="KvDb.ScanAsync"/> (which awaits its
    /// block reads anyway) ignore it.
    /// </summary>
    public bool AsyncIO { get; set; }
}
