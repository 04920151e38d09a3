using System.Buffers;
using KvEngine.Benchmarks.Shared;
using RocksDbSharp;
using RocksReadOptions = RocksDbSharp.ReadOptions;
using RocksWriteOptions = RocksDbSharp.WriteOptions;

namespace KvEngine.Benchmarks.RocksDbBaseline;

/// <summary>
/// Benchmark baseline only: a release-RocksDB database (RocksDbSharp from the <c>RocksDB</c> NuGet
/// package, with its own release <c>librocksdb.so</c>) opened with <see cref="ComparisonSettings"/>
/// and its own LRU block cache, for the suites that carry RocksDB as <c>Baseline = true</c>.
/// Writes and iterators use RocksDbSharp's span-based wrapper calls (no managed allocation);
/// <see cref="TryGet"/> goes through <see cref="RocksDbCalls"/> because the wrapper's span Get returns
/// a new array. Thread-safe as RocksDB is; dispose once, after every iterator.
/// </summary>
internal sealed class RocksDbBaselineDb : IDisposable
{
    private readonly IntPtr _cache;
    private readonly DbOptions _options;
    private readonly BlockBasedTableOptions _table;
    private bool _disposed;

    /// <summary>Opens (creating) a database at <paramref name="path"/> with a <paramref name="cacheBytes"/>-byte block cache.</summary>
    public RocksDbBaselineDb(string path, long cacheBytes)
    {
        Native n = Native.Instance;
        IntPtr lru = n.rocksdb_lru_cache_options_create();
        n.rocksdb_lru_cache_options_set_capacity(lru, (UIntPtr)(ulong)cacheBytes);
        _cache = n.rocksdb_cache_create_lru_opts(lru);
        n.rocksdb_lru_cache_options_destroy(lru);
        _table = new BlockBasedTableOptions()
            .SetBlockSize(ComparisonSettings.BlockSize)
            .SetBlockCache(_cache)
            .SetCacheIndexAndFilterBlocks(false);
        n.rocksdb_block_based_options_set_filter_policy(_table.Handle, n.rocksdb_filterpolicy_create_bloom_full(ComparisonSettings.BloomBitsPerKey));
        n.rocksdb_block_based_options_set_checksum(_table.Handle, (char)4); // kXXH3
        _options = new DbOptions()
            .SetCreateIfMissing(true)
            .SetBlockBasedTableFactory(_table)
            .SetCompression(RocksDbSharp.Compression.Lz4)
            .SetWriteBufferSize(ComparisonSettings.WriteBufferSize);
        Db = RocksDb.Open(_options, path);
        ReadOptions = new RocksReadOptions().SetVerifyChecksums(true);
        WriteOptions = new RocksWriteOptions();
    }

    public RocksDb Db { get; }

    public RocksReadOptions ReadOptions { get; }

    public RocksWriteOptions WriteOptions { get; }

    public void Put(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) => Db.Put(key, value, null, WriteOptions);

    /// <summary><c>rocksdb_get_pinned</c>, the value copied into <paramref name="value"/>: no managed allocation.</summary>
    public bool TryGet(ReadOnlySpan<byte> key, IBufferWriter<byte> value) => RocksDbCalls.TryGet(Db.Handle, ReadOptions.Handle, key, value);

    /// <summary>Flushes the memtable and waits; then checks that the data sits in exactly one level-0 table.</summary>
    public void FlushToOneTable()
    {
        Db.Flush(new FlushOptions().SetWaitForFlush(true));
        if (Db.GetProperty("rocksdb.num-files-at-level0") != "1")
        {
            throw new InvalidOperationException("The flushed RocksDB database should hold exactly one level-0 table.");
        }
    }

    public Iterator NewIterator() => Db.NewIterator(null, ReadOptions);

    public void Dispose()
    {
        if (!_disposed)
        {
            _disposed = true;
            Db.Dispose();
            Native.Instance.rocksdb_cache_destroy(_cache);
            GC.KeepAlive(_options);
            GC.KeepAlive(_table);
        }
    }
}
