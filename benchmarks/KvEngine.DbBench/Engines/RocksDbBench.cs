using System.Buffers;
using System.Globalization;
using KvEngine.Benchmarks.Shared;
using RocksDbSharp;
using RocksReadOptions = RocksDbSharp.ReadOptions;
using RocksWriteOptions = RocksDbSharp.WriteOptions;

namespace KvEngine.DbBench.Engines;

/// <summary>
/// kvbench's release-RocksDB engine (<c>-engine=rocksdb</c>): RocksDbSharp from the <c>RocksDB</c>
/// NuGet package and the release <c>librocksdb.so</c> it ships, options mapped from the same flags
/// by <see cref="RocksDbOptionsMapper"/>. The per-operation calls go straight to RocksDbSharp's
/// C-API bindings with spans pinned in place (<c>rocksdb_put</c>, <c>rocksdb_get_pinned</c>,
/// <c>rocksdb_iter_*</c>), so the wrapper adds one P/Invoke and no managed allocation per operation:
/// the fairest a .NET caller can drive RocksDB. The block cache lives across reopens and is destroyed
/// with the engine. A mutable struct held in one field of the runner (see
/// <see cref="IBenchEngine{TIterator, TBatch}"/>); open/close on the main thread only.
/// </summary>
internal unsafe struct RocksDbBench : IBenchEngine<RocksDbBenchIterator, RocksDbBenchBatch>
{
    private readonly BenchFlags _f;
    private readonly RocksWriteOptions _write;
    private readonly RocksWriteOptions _syncWrite;
    private readonly RocksReadOptions _read;
    private readonly IntPtr _blockCache;
    private BlockBasedTableOptions? _table;
    private DbOptions? _options;
    private RocksDb? _db;
    private IntPtr _handle;
    private IntPtr _defaultFamily;
    private string? _version;

    /// <summary>Refuses the flags RocksDB cannot honour (<see cref="ArgumentException"/>) and creates the block cache.</summary>
    public RocksDbBench(BenchFlags flags)
    {
        RocksDbOptionsMapper.Validate(flags);
        _f = flags;
        _write = new RocksWriteOptions().SetSync(flags.Sync).DisableWal(flags.DisableWal ? 1 : 0);
        _syncWrite = new RocksWriteOptions().SetSync(true).DisableWal(flags.DisableWal ? 1 : 0);
        _read = new RocksReadOptions().SetVerifyChecksums(flags.VerifyChecksum).SetPrefixSameAsStart(flags.PrefixSameAsStart).SetTotalOrderSeek(flags.TotalOrderSeek)
            .SetAsyncIO(flags.AsyncIO);
        _blockCache = RocksDbOptionsMapper.CreateBlockCache(flags);
    }

    public readonly string Description =>
        "rocksdb (release RocksDB " + (_version ?? "?") + " via RocksDbSharp " +
        typeof(RocksDb).Assembly.GetName().Version + ")";

    public void Open()
    {
        _table = new BlockBasedTableOptions();
        _options = RocksDbOptionsMapper.Create(_f, _table, _blockCache);
        _db = RocksDb.Open(_options, _f.Db);
        _handle = _db.Handle;
        _defaultFamily = Native.Instance.rocksdb_get_default_column_family_handle(_handle);
        _version ??= ReadVersion(_f.Db);
    }

    public void Close()
    {
        if (_defaultFamily != IntPtr.Zero)
        {
            Native.Instance.rocksdb_column_family_handle_destroy(_defaultFamily);
            _defaultFamily = IntPtr.Zero;
        }
        _db?.Dispose();
        _db = null;
        _handle = IntPtr.Zero;
    }

    /// <summary>One family only: <see cref="RocksDbOptionsMapper.Validate"/> refuses -num_column_families above 1, so <paramref name="family"/> is 0.</summary>
    public readonly void Put(int family, ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, bool sync)
    {
        IntPtr err;
        fixed (byte* k = key)
        fixed (byte* v = value)
        {
            Native.Instance.rocksdb_put(_handle, (sync ? _syncWrite : _write).Handle, k, (UIntPtr)key.Length, v, (UIntPtr)value.Length, out err);
        }
        ThrowIfError(err);
    }

    public readonly void Merge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> operand, bool sync)
    {
        IntPtr err;
        fixed (byte* k = key)
        fixed (byte* v = operand)
        {
            Native.Instance.rocksdb_merge(_handle, (sync ? _syncWrite : _write).Handle, k, (UIntPtr)key.Length, v, (UIntPtr)operand.Length, out err);
        }
        ThrowIfError(err);
    }

    public readonly void Delete(ReadOnlySpan<byte> key, bool sync)
    {
        IntPtr err;
        fixed (byte* k = key)
        {
            Native.Instance.rocksdb_delete(_handle, (sync ? _syncWrite : _write).Handle, k, (UIntPtr)key.Length, out err);
        }
        ThrowIfError(err);
    }

    public readonly RocksDbBenchBatch NewBatch() => new(Native.Instance.rocksdb_writebatch_create());

    public readonly void Write(RocksDbBenchBatch batch, bool sync)
    {
        Native.Instance.rocksdb_write(_handle, (sync ? _syncWrite : _write).Handle, batch.Handle, out IntPtr err);
        ThrowIfError(err);
    }

    /// <summary><c>rocksdb_get_pinned</c>: the value is read in place from the memtable or cached block, then copied out.</summary>
    public readonly bool TryGet(int family, ReadOnlySpan<byte> key, ArrayBufferWriter<byte> value) => RocksDbCalls.TryGet(_handle, _read.Handle, key, value);

    /// <summary><c>rocksdb_batched_multi_get_cf</c> (RocksDB's batched MultiGet) on the one family, values copied out of RocksDB's pinned slices.</summary>
    public readonly void MultiGet(int family, ReadOnlyMemory<byte>[] keys, MultiGetResults results) =>
        RocksDbCalls.MultiGet(_handle, _read.Handle, _defaultFamily, keys, results);

    public readonly ValueTask<bool> TryGetAsync(ReadOnlyMemory<byte> key, ArrayBufferWriter<byte> value) =>
        throw new NotSupportedException("RocksDB's C API has no asynchronous Get; RocksDbOptionsMapper.Validate refuses -inflight");

    public readonly RocksDbBenchIterator NewIterator() => new(Native.Instance.rocksdb_create_iterator(_handle, _read.Handle));

    public readonly void Flush()
    {
        _db!.Flush(new FlushOptions().SetWaitForFlush(true));
    }

    public readonly void CompactAll() => Native.Instance.rocksdb_compact_range(_handle, (byte*)null, UIntPtr.Zero, (byte*)null, UIntPtr.Zero);

    public readonly string? GetProperty(string name) => _db!.GetProperty(name);

    /// <summary>db_bench's sstables: the <c>rocksdb.sstables</c> property.</summary>
    public readonly string SsTables() => _db!.GetProperty("rocksdb.sstables") ?? string.Empty;

    public readonly EngineMemory SampleMemory()
    {
        RocksDb? db = _db;
        return db == null ? EngineMemory.Unknown : MemoryReport.RocksDbMemory(db.GetProperty);
    }

    public readonly void PrintReport(TextWriter output)
    {
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"Block cache: capacity {_f.CacheSize}, usage {(ulong)Native.Instance.rocksdb_cache_get_usage(_blockCache)}"));
        if (_f.Statistics)
        {
            output.WriteLine("STATISTICS:");
            output.Write(_options!.GetStatisticsString());
        }
    }

    public void Dispose()
    {
        Close();
        Native.Instance.rocksdb_cache_destroy(_blockCache);
    }

    private readonly string Mb(string property) =>
        ulong.TryParse(_db!.GetProperty(property), NumberStyles.None, CultureInfo.InvariantCulture, out ulong bytes)
            ? (bytes / 1048576.0).ToString("F1", CultureInfo.InvariantCulture)
            : "?";

    /// <summary>The library's version as RocksDB records it in the OPTIONS file it writes on open.</summary>
    private static string? ReadVersion(string db)
    {
        string? newest = Directory.EnumerateFiles(db, "OPTIONS-*").Order(StringComparer.Ordinal).LastOrDefault();
        if (newest == null)
        {
            return null;
        }
        foreach (string line in File.ReadLines(newest))
        {
            string t = line.Trim();
            if (t.StartsWith("rocksdb_version=", StringComparison.Ordinal))
            {
                return t["rocksdb_version=".Length..];
            }
        }
        return null;
    }

    private static void ThrowIfError(IntPtr err) => RocksDbCalls.ThrowIfError(err);
}
