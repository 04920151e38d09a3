using KvEngine.Storage;

namespace KvEngine;

/// <summary>
/// Options for opening a database. Names and defaults follow RocksDB's Options and
/// BlockBasedTableOptions. An instance may be shared by several opens; the database copies what it
/// needs at open and validates it (<see cref="ArgumentException"/> for values out of range).
/// </summary>
public sealed class KvOptions
{
    /// <summary>Create the database when the directory holds none (RocksDB: create_if_missing).</summary>
    public bool CreateIfMissing { get; set; } = true;

    /// <summary>Fail to open when a database already exists (RocksDB: error_if_exists).</summary>
    public bool ErrorIfExists { get; set; }

    /// <summary>Bytes a memtable may hold before it becomes immutable and is flushed (64 MiB).</summary>
    public long WriteBufferSize { get; set; } = 64L << 20;

    /// <summary>Mutable plus immutable memtables allowed before writers wait for a flush (2).</summary>
    public int MaxWriteBufferNumber { get; set; } = 2;

    /// <summary>How a damaged write-ahead log is treated at open (RocksDB's wal_recovery_mode).</summary>
    public WalRecoveryMode WalRecoveryMode { get; set; } = WalRecoveryMode.PointInTimeRecovery;

    /// <summary>Target size of uncompressed data blocks in bytes (4096).</summary>
    public int BlockSize { get; set; } = 4096;

    /// <summary>Keys between restart points in data blocks (16).</summary>
    public int BlockRestartInterval { get; set; } = 16;

    /// <summary>Compression for data blocks. RocksDB's default, Snappy, is not offered; LZ4 is ours.</summary>
    public KvCompressionType Compression { get; set; } = KvCompressionType.Lz4;

    /// <summary>Checksum written in block trailers (XXH3, RocksDB 7.8's default).</summary>
    public KvChecksumType Checksum { get; set; } = KvChecksumType.XxHash3;

    /// <summary>Bloom filter bits per key for whole-key filters; 0 writes no filter (10).</summary>
    public double BloomBitsPerKey { get; set; } = 10;

    /// <summary>
    /// Size each Bloom filter so the memory holding it fills an allocator size class exactly, with
    /// the mean false-positive rate kept on the bits-per-key target; costs about 1-2% more filter
    /// bytes on disk (RocksDB: optimize_filters_for_memory; false).
    /// </summary>
    public bool OptimizeFiltersForMemory { get; set; }

    /// <summary>Verify every block read during recovery and compaction-like internal reads.</summary>
    public bool ParanoidChecks { get; set; } = true;

    /// <summary>The file system: the operating system's unless a test substitutes one.</summary>
    internal IFileSystem FileSystem { get; set; } = LocalFileSystem.Instance;

    internal KvOptions Clone() => (KvOptions)MemberwiseClone();

    internal void Validate()
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(WriteBufferSize, 4096, nameof(WriteBufferSize));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(WriteBufferSize, 1L << 40, nameof(WriteBufferSize));
        ArgumentOutOfRangeException.ThrowIfLessThan(MaxWriteBufferNumber, 2, nameof(MaxWriteBufferNumber));
        ArgumentOutOfRangeException.ThrowIfLessThan(BlockSize, 256, nameof(BlockSize));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(BlockSize, 64 << 20, nameof(BlockSize));
        ArgumentOutOfRangeException.ThrowIfLessThan(BlockRestartInterval, 1, nameof(BlockRestartInterval));
        if (!Enum.IsDefined(Compression))
        {
            throw new ArgumentException($"Unknown compression type {(int)Compression}.", nameof(Compression));
        }
        if (!Enum.IsDefined(Checksum))
        {
            throw new ArgumentException($"Unknown checksum type {(int)Checksum}.", nameof(Checksum));
        }
        if (!Enum.IsDefined(WalRecoveryMode))
        {
            throw new ArgumentException($"Unknown WAL recovery mode {(int)WalRecoveryMode}.", nameof(WalRecoveryMode));
        }
        if (double.IsNaN(BloomBitsPerKey) || BloomBitsPerKey < 0 || BloomBitsPerKey > 100)
        {
            throw new ArgumentOutOfRangeException(nameof(BloomBitsPerKey), BloomBitsPerKey, "Bits per key must be in [0, 100].");
        }
        ArgumentNullException.ThrowIfNull(FileSystem);
    }
}
