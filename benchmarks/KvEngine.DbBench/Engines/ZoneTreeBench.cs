using System.Buffers;
using System.Globalization;
using System.Text;
using ZoneTree;
using ZoneTree.Comparers;
using ZoneTree.Options;
using ZoneTree.Serializers;

namespace KvEngine.DbBench.Engines;

/// <summary>
/// kvbench's ZoneTree engine (<c>-engine=zonetree</c>): ZoneTree, a managed LSM tree from the
/// <c>ZoneTree</c> NuGet package, over byte-array keys and values in lexicographic order, persistent
/// in <c>-db</c>, with its maintainer merging in the background. The flags map as far as ZoneTree
/// has a counterpart (docs/benchmarks.md, "Seek against ZoneTree", lists what cannot match):
/// <list type="bullet">
/// <item>the WAL: off with <c>-disable_wal</c>, synced per write with <c>-sync</c>, otherwise
/// ZoneTree's <c>AsyncCompressed</c> mode (written by a background thread, never synced: db_bench's
/// default of a WAL written but not synced);</item>
/// <item>the memtable: <c>-write_buffer_size / (key_size + value_size)</c> entries before ZoneTree
/// moves its mutable segment forward (its limit is a count, not bytes);</item>
/// <item>compression of the disk segment: <c>-compression_type</c> none, lz4, zstd as such; snappy,
/// which ZoneTree lacks, as lz4. ZoneTree compresses blocks of 4 MiB (its default), not
/// <c>-block_size</c>, and caches decompressed blocks by age, not by <c>-cache_size</c>.</item>
/// </list>
/// ZoneTree's API takes keys and values as arrays: every put, get and seek copies the span into
/// new arrays, managed allocation kvbench's B/op line reports. A mutable struct held in one field
/// of the runner (see <see cref="IBenchEngine{TIterator, TBatch}"/>); open/close on the main thread only.
/// </summary>
internal struct ZoneTreeBench : IBenchEngine<ZoneTreeBenchIterator, ZoneTreeBenchBatch>
{
    private readonly BenchFlags _f;
    private IZoneTree<byte[], byte[]>? _tree;
    private IMaintainer? _maintainer;

    /// <summary>Refuses the flags ZoneTree cannot honour (<see cref="ArgumentException"/>).</summary>
    public ZoneTreeBench(BenchFlags flags)
    {
        Validate(flags);
        _f = flags;
    }

    public readonly string Description =>
        "zonetree (ZoneTree " + typeof(IZoneTree<,>).Assembly.GetName().Version + ", mutable segment of " +
        MutableSegmentItems(_f).ToString(CultureInfo.InvariantCulture) + " entries, WAL " + WalMode(_f) + ", disk segment " + Compression(_f) + ")";

    /// <summary>Throws <see cref="ArgumentException"/> naming every flag that <c>-engine=zonetree</c> cannot map.</summary>
    public static void Validate(BenchFlags f)
    {
        var refused = new List<string>();
        foreach (string b in f.Benchmarks.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            if (b is "filterbench" or "cachebench" or "raftbench")
            {
                refused.Add($"-benchmarks={b} (a KvEngine component benchmark)");
            }
            else if (b is "readreverse")
            {
                refused.Add("-benchmarks=readreverse (ZoneTree iterators run one way; a reverse scan is a different iterator)");
            }
            else if (b is "mergerandom" or "readrandommergerandom")
            {
                refused.Add($"-benchmarks={b} (ZoneTree has no merge operator)");
            }
        }
        if (f.MergeOperator.Length > 0)
        {
            refused.Add("-merge_operator (ZoneTree has no merge operator)");
        }
        if (f.WritesPerRangeTombstone > 0)
        {
            refused.Add("-writes_per_range_tombstone (ZoneTree has no range deletion)");
        }
        if (f.NumColumnFamilies > 1)
        {
            refused.Add("-num_column_families above 1 (ZoneTree has no column families)");
        }
        if (f.CompressionType is not (KvCompressionType.None or KvCompressionType.Snappy or KvCompressionType.Lz4 or KvCompressionType.Zstd))
        {
            refused.Add($"-compression_type={f.CompressionType} (ZoneTree compresses with none, lz4, zstd, brotli or gzip)");
        }
        if (f.AsyncIO)
        {
            refused.Add("-async_io (ZoneTree has no asynchronous reads)");
        }
        if (f.InFlight > 0)
        {
            refused.Add("-inflight (ZoneTree has no asynchronous Get)");
        }
        if (refused.Count > 0)
        {
            throw new ArgumentException("-engine=zonetree cannot map these flags:\n  " + string.Join("\n  ", refused));
        }
    }

    public void Open()
    {
        BenchFlags f = _f;
        _tree = new ZoneTreeFactory<byte[], byte[]>()
            .SetDataDirectory(f.Db)
            .SetComparer(new BytesLexicographicComparerAscending())
            .SetKeySerializer(new BytesSerializer())
            .SetValueSerializer(new BytesSerializer())
            .SetMutableSegmentMaxItemCount(MutableSegmentItems(f))
            .ConfigureWriteAheadLogOptions(w => w.WriteAheadLogMode = WalMode(f))
            .ConfigureDiskSegmentOptions(d => d.CompressionMethod = Compression(f))
            .OpenOrCreate();
        _maintainer = _tree.CreateMaintainer();
    }

    public void Close()
    {
        if (_maintainer != null)
        {
            _maintainer.WaitForBackgroundThreads();
            _maintainer.Dispose();
            _maintainer = null;
        }
        _tree?.Dispose();
        _tree = null;
    }

    /// <summary>One family only (<see cref="Validate"/>); <paramref name="sync"/> is the WAL mode chosen at open.</summary>
    public readonly void Put(int family, ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, bool sync)
    {
        byte[] k = key.ToArray();
        byte[] v = value.ToArray();
        _tree!.Upsert(in k, in v);
    }

    public readonly void Delete(ReadOnlySpan<byte> key, bool sync)
    {
        byte[] k = key.ToArray();
        _tree!.ForceDelete(in k);
    }

    public readonly void Merge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> operand, bool sync) =>
        throw new NotSupportedException("ZoneTree has no merge operator; Validate refuses -merge_operator");

    public readonly ZoneTreeBenchBatch NewBatch() => new();

    public readonly void Write(ZoneTreeBenchBatch batch, bool sync) => batch.ApplyTo(_tree!);

    public readonly ValueTask<bool> TryGetAsync(ReadOnlyMemory<byte> key, ArrayBufferWriter<byte> value) =>
        throw new NotSupportedException("ZoneTree has no asynchronous Get; Validate refuses -inflight");

    public readonly bool TryGet(int family, ReadOnlySpan<byte> key, ArrayBufferWriter<byte> value)
    {
        byte[] k = key.ToArray();
        if (!_tree!.TryGet(in k, out byte[] v))
        {
            return false;
        }
        value.Write(v);
        return true;
    }

    /// <summary>ZoneTree has no batched lookup: one <c>TryGet</c> per key, found values appended to <paramref name="results"/>.</summary>
    public readonly void MultiGet(int family, ReadOnlyMemory<byte>[] keys, MultiGetResults results)
    {
        results.Reset(keys.Length);
        for (int i = 0; i < keys.Length; i++)
        {
            byte[] k = keys[i].Span.ToArray();
            if (_tree!.TryGet(in k, out byte[] v))
            {
                int start = results.Begin();
                results.Writer.Write(v);
                results.Complete(i, found: true, start);
            }
        }
    }

    /// <summary>
    /// ZoneTree's default iterator (<see cref="IteratorType.AutoRefresh"/>: it follows the segments
    /// as they move), filling its block cache as RocksDB's iterators do by default (fill_cache).
    /// </summary>
    public readonly ZoneTreeBenchIterator NewIterator() =>
        new(_tree!.CreateIterator(IteratorType.AutoRefresh, includeDeletedRecords: false, contributeToTheBlockCache: true));

    /// <summary>Moves the mutable segment forward and waits for the maintainer to merge it into the disk segment.</summary>
    public readonly void Flush()
    {
        _maintainer!.EvictToDisk();
        _maintainer.WaitForBackgroundThreads();
    }

    /// <summary>Everything into the disk segment (<see cref="Flush"/>): ZoneTree's merge is its compaction.</summary>
    public readonly void CompactAll() => Flush();

    /// <summary>The properties kvbench's waitforcompaction and stats read; null for the others.</summary>
    public readonly string? GetProperty(string name)
    {
        IZoneTreeMaintenance<byte[], byte[]> m = _tree!.Maintenance;
        return name switch
        {
            "rocksdb.compaction-pending" or "rocksdb.num-running-compactions" => m.IsMerging || m.IsBottomSegmentsMerging ? "1" : "0",
            "rocksdb.num-running-flushes" => "0",
            "rocksdb.stats" => SsTables(),
            _ => null,
        };
    }

    /// <summary>ZoneTree's segments: mutable, read-only (frozen memtables), disk and bottom segments, with their record counts.</summary>
    public readonly string SsTables()
    {
        IZoneTreeMaintenance<byte[], byte[]> m = _tree!.Maintenance;
        var s = new StringBuilder();
        s.Append(CultureInfo.InvariantCulture, $"mutable segment: {m.MutableSegmentRecordCount} records\n");
        s.Append(CultureInfo.InvariantCulture, $"read-only segments: {m.ReadOnlySegmentsCount} ({m.ReadOnlySegmentsRecordCount} records)\n");
        s.Append(CultureInfo.InvariantCulture, $"disk segment: {m.DiskSegment.Length} records\n");
        s.Append(CultureInfo.InvariantCulture, $"bottom segments: {m.BottomSegments.Count}\n");
        return s.ToString();
    }

    /// <summary>ZoneTree reports no memory figures of its own; the process's RSS is still sampled.</summary>
    public readonly EngineMemory SampleMemory() => EngineMemory.Unknown;

    public readonly void PrintReport(TextWriter output)
    {
        if (_tree != null)
        {
            output.Write(SsTables());
        }
    }

    public void Dispose() => Close();

    private static int MutableSegmentItems(BenchFlags f) => (int)Math.Clamp(f.WriteBufferSize / Math.Max(1, f.KeySize + f.ValueSize), 1, int.MaxValue);

    private static WriteAheadLogMode WalMode(BenchFlags f) =>
        f.DisableWal ? WriteAheadLogMode.None : f.Sync ? WriteAheadLogMode.Sync : WriteAheadLogMode.AsyncCompressed;

    private static CompressionMethod Compression(BenchFlags f) => f.CompressionType switch
    {
        KvCompressionType.None => CompressionMethod.None,
        KvCompressionType.Zstd => CompressionMethod.Zstd,
        _ => CompressionMethod.LZ4, // lz4, and snappy (ZoneTree has none)
    };
}
