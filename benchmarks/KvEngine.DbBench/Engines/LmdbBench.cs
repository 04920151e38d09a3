using System.Buffers;
using System.Buffers.Binary;
using System.Globalization;
using System.Text;
using LightningDB;

namespace KvEngine.DbBench.Engines;

/// <summary>
/// kvbench's LMDB engine (<c>-engine=lmdb</c>): LMDB, a copy-on-write B+tree in one memory map,
/// through LightningDB 0.24.0 (liblmdb from <see cref="LmdbNative"/>), the baseline of the read
/// comparison in docs/benchmarks.md ("Reads vs LMDB"). Set up as a .NET user would for speed with
/// an unsynced WAL's class of durability:
/// <list type="bullet">
/// <item>the environment opened with <c>MDB_NOSYNC</c> (no fsync at commit; <c>-sync</c> drops it,
/// so commits are durable) and <c>MDB_WRITEMAP</c> (writes go straight to the map), plus
/// <c>MDB_NOTLS</c> so read transactions are not tied to threads (<see cref="LmdbReader"/>);</item>
/// <item>the map sized for the data: <see cref="MapSize"/>, four times the keys and values of
/// <c>-num</c> plus 64 MiB (the file is sparse; a copy-on-write tree under overwrites keeps free
/// pages for reuse, and LMDB fails a commit with <c>MDB_MAP_FULL</c> rather than grow);</item>
/// <item>one write transaction per Put or Delete, one per batch where db_bench batches;</item>
/// <item>each Get (and each iterator) on the thread's read transaction, renewed and reset around it
/// instead of created (<c>mdb_txn_renew</c>/<c>mdb_txn_reset</c>); multireadrandom a loop of Gets
/// in one renewed transaction (LMDB has no batched lookup).</item>
/// </list>
/// LMDB has no memtable, compaction, merge operator, range deletion or column families: flush is an
/// <c>mdb_env_sync</c>, compact does nothing, and the flags needing the others are refused
/// (<see cref="Validate"/>). Its memory is the map's resident pages, counted in the process's RSS
/// (kvbench's peak RSS line) and reported by no property. A mutable struct held in one field of the
/// runner (see <see cref="IBenchEngine{TIterator, TBatch}"/>); open/close on the main thread only.
/// </summary>
internal struct LmdbBench : IBenchEngine<LmdbBenchIterator, LmdbBenchBatch>
{
    private readonly BenchFlags _f;
    private LightningEnvironment? _env;
    private LightningDatabase? _db;
    private LmdbReaders? _readers;
    private string? _version;

    /// <summary>Refuses the flags LMDB cannot honour (<see cref="ArgumentException"/>) and installs the library resolver.</summary>
    public LmdbBench(BenchFlags flags)
    {
        Validate(flags);
        _f = flags;
        LmdbNative.Install();
    }

    public readonly string Description =>
        "lmdb (LMDB " + (_version ?? "?") + " from " + LmdbNative.Loaded + " via LightningDB " +
        typeof(LightningEnvironment).Assembly.GetName().Version + ", map " + (MapSize(_f) >> 20).ToString(CultureInfo.InvariantCulture) +
        " MiB, " + OpenFlags(_f) + ")";

    /// <summary>
    /// The map size for <paramref name="f"/>: 4 x <c>-num</c> x (key + value + 16 bytes of node
    /// header) + 64 MiB, rounded up to 1 MiB. LMDB's pages fill to 50-100% after random inserts and a
    /// copy-on-write commit needs free pages beside the live ones; the file is sparse, so the unused
    /// part costs address space only.
    /// </summary>
    public static long MapSize(BenchFlags f)
    {
        long bytes = checked(4 * f.Num * (f.KeySize + f.ValueSize + 16) + (64L << 20));
        return (bytes + (1L << 20) - 1) & ~((1L << 20) - 1);
    }

    /// <summary>Throws <see cref="ArgumentException"/> naming every flag that <c>-engine=lmdb</c> cannot map.</summary>
    public static void Validate(BenchFlags f)
    {
        var refused = new List<string>();
        foreach (string b in f.Benchmarks.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            if (b is "filterbench" or "cachebench" or "raftbench" or "largevalue")
            {
                refused.Add($"-benchmarks={b} (a KvEngine component benchmark)");
            }
            else if (b is "mergerandom" or "readrandommergerandom")
            {
                refused.Add($"-benchmarks={b} (LMDB has no merge operator)");
            }
        }
        if (f.MergeOperator.Length > 0)
        {
            refused.Add("-merge_operator (LMDB has no merge operator)");
        }
        if (f.WritesPerRangeTombstone > 0)
        {
            refused.Add("-writes_per_range_tombstone (LMDB has no range deletion)");
        }
        if (f.NumColumnFamilies > 1)
        {
            refused.Add("-num_column_families above 1 (kvbench's LMDB engine uses the main database only)");
        }
        if (f.KeySize > 511)
        {
            refused.Add("-key_size above 511 (LMDB's default maximum key size)");
        }
        if (f.AsyncIO)
        {
            refused.Add("-async_io (LMDB has no asynchronous reads)");
        }
        if (f.InFlight > 0)
        {
            refused.Add("-inflight (LMDB has no asynchronous Get)");
        }
        if (refused.Count > 0)
        {
            throw new ArgumentException("-engine=lmdb cannot map these flags:\n  " + string.Join("\n  ", refused));
        }
    }

    public void Open()
    {
        Directory.CreateDirectory(_f.Db);
        var env = new LightningEnvironment(_f.Db, new EnvironmentConfiguration { MapSize = MapSize(_f), MaxReaders = 512 });
        try
        {
            env.Open(OpenFlags(_f));
            LightningDatabase db;
            using (LightningTransaction tx = env.BeginTransaction())
            {
                db = tx.OpenDatabase(configuration: new DatabaseConfiguration { Flags = DatabaseOpenFlags.Create });
                tx.Commit().ThrowOnError();
            }
            LightningVersionInfo v = env.Version;
            _version ??= string.Create(CultureInfo.InvariantCulture, $"{v.Major}.{v.Minor}.{v.Patch}");
            _env = env;
            _db = db;
            _readers = new LmdbReaders(env, db);
        }
        catch
        {
            env.Dispose();
            throw;
        }
    }

    public void Close()
    {
        _readers?.Dispose();
        _readers = null;
        _db?.Dispose();
        _db = null;
        _env?.Dispose();
        _env = null;
    }

    /// <summary>One write transaction: <c>mdb_put</c> and commit. One family only (<see cref="Validate"/>); <paramref name="sync"/> was chosen at open (<c>-sync</c>).</summary>
    public readonly void Put(int family, ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, bool sync)
    {
        using LightningTransaction tx = _env!.BeginTransaction();
        tx.Put(_db!, key, value).ThrowOnError();
        tx.Commit().ThrowOnError();
    }

    /// <summary>One write transaction: <c>mdb_del</c> (absent keys are not an error, as in RocksDB) and commit.</summary>
    public readonly void Delete(ReadOnlySpan<byte> key, bool sync)
    {
        using LightningTransaction tx = _env!.BeginTransaction();
        tx.Delete(_db!, key).ThrowOnReadError();
        tx.Commit().ThrowOnError();
    }

    public readonly void Merge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> operand, bool sync) =>
        throw new NotSupportedException("LMDB has no merge operator; Validate refuses -merge_operator");

    public readonly LmdbBenchBatch NewBatch() => new();

    /// <summary>The batch's puts and deletes in order in one write transaction.</summary>
    public readonly void Write(LmdbBenchBatch batch, bool sync)
    {
        using LightningTransaction tx = _env!.BeginTransaction();
        ReadOnlySpan<byte> ops = batch.Operations;
        while (!ops.IsEmpty)
        {
            byte op = ops[0];
            int keyLength = BinaryPrimitives.ReadInt32LittleEndian(ops[1..]);
            int valueLength = BinaryPrimitives.ReadInt32LittleEndian(ops[5..]);
            ReadOnlySpan<byte> key = ops.Slice(9, keyLength);
            if (op == LmdbBenchBatch.PutOp)
            {
                tx.Put(_db!, key, ops.Slice(9 + keyLength, valueLength)).ThrowOnError();
            }
            else
            {
                tx.Delete(_db!, key).ThrowOnReadError();
            }
            ops = ops[(9 + keyLength + valueLength)..];
        }
        tx.Commit().ThrowOnError();
    }

    /// <summary><c>mdb_get</c> in the thread's renewed read transaction; the value copied out of the map.</summary>
    public readonly ValueTask<bool> TryGetAsync(ReadOnlyMemory<byte> key, ArrayBufferWriter<byte> value) =>
        throw new NotSupportedException("LMDB has no asynchronous Get; Validate refuses -inflight");

    public readonly bool TryGet(int family, ReadOnlySpan<byte> key, ArrayBufferWriter<byte> value)
    {
        LmdbReader r = _readers!.Take();
        try
        {
            r.Begin();
            (MDBResultCode code, _, MDBValue v) = r.Transaction.Get(_db!, key);
            code.ThrowOnReadError();
            if (code != MDBResultCode.Success)
            {
                return false;
            }
            value.Write(v.AsSpan());
            return true;
        }
        finally
        {
            LmdbReaders.Give(r);
        }
    }

    /// <summary>LMDB has no batched lookup: one <c>mdb_get</c> per key, all in one renewed read transaction (one snapshot).</summary>
    public readonly void MultiGet(int family, ReadOnlyMemory<byte>[] keys, MultiGetResults results)
    {
        results.Reset(keys.Length);
        LmdbReader r = _readers!.Take();
        try
        {
            r.Begin();
            for (int i = 0; i < keys.Length; i++)
            {
                (MDBResultCode code, _, MDBValue v) = r.Transaction.Get(_db!, keys[i].Span);
                code.ThrowOnReadError();
                if (code == MDBResultCode.Success)
                {
                    int start = results.Begin();
                    results.Writer.Write(v.AsSpan());
                    results.Complete(i, found: true, start);
                }
            }
        }
        finally
        {
            LmdbReaders.Give(r);
        }
    }

    /// <summary>The thread's reader's cursor on a renewed snapshot (no allocation once the thread has its reader).</summary>
    public readonly LmdbBenchIterator NewIterator() => new(_readers!.Take().OpenIterator());

    /// <summary>LMDB has no memtable: the data is in the map already; flush makes it durable (<c>mdb_env_sync</c>, forced).</summary>
    public readonly void Flush() => _env!.Flush(force: true);

    /// <summary>A B+tree has nothing to compact.</summary>
    public readonly void CompactAll()
    {
    }

    /// <summary>The properties kvbench's waitforcompaction and stats read (LMDB never has work pending); null for the others.</summary>
    public readonly string? GetProperty(string name) => name switch
    {
        "rocksdb.compaction-pending" or "rocksdb.num-running-compactions" or "rocksdb.num-running-flushes" => "0",
        "rocksdb.stats" => SsTables(),
        _ => null,
    };

    /// <summary>The B+tree's shape: <c>mdb_stat</c> of the main database and the map's use.</summary>
    public readonly string SsTables()
    {
        Stats s;
        using (LightningTransaction tx = _env!.BeginTransaction(TransactionBeginFlags.ReadOnly))
        {
            s = tx.GetStats(_db!);
        }
        var sb = new StringBuilder();
        sb.Append(CultureInfo.InvariantCulture, $"B+tree: depth {s.BTreeDepth}, {s.BranchPages} branch pages, {s.LeafPages} leaf pages, ");
        sb.Append(CultureInfo.InvariantCulture, $"{s.OverflowPages} overflow pages, {s.Entries} entries, page size {s.PageSize}\n");
        long used = (s.BranchPages + s.LeafPages + s.OverflowPages) * s.PageSize;
        sb.Append(CultureInfo.InvariantCulture, $"tree pages: {used / 1048576.0:F1} MB of a {MapSize(_f) >> 20} MiB map\n");
        return sb.ToString();
    }

    /// <summary>LMDB reports no memory figures; its map's resident pages are in the sampled RSS.</summary>
    public readonly EngineMemory SampleMemory() => EngineMemory.Unknown;

    public readonly void PrintReport(TextWriter output)
    {
        if (_env != null)
        {
            output.Write(SsTables());
        }
    }

    public void Dispose() => Close();

    private static EnvironmentOpenFlags OpenFlags(BenchFlags f) =>
        (f.Sync ? EnvironmentOpenFlags.None : EnvironmentOpenFlags.NoSync) | EnvironmentOpenFlags.WriteMap | EnvironmentOpenFlags.NoThreadLocalStorage;
}
