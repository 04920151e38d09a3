using System.Buffers;
using System.Diagnostics;
using System.Globalization;
using KvEngine.DbBench.Engines;

namespace KvEngine.DbBench;

/// <summary>
/// Runs db_bench's benchmarks by name against a storage engine (<typeparamref name="TEngine"/>:
/// KvEngine or release RocksDB, kvbench's <c>-engine</c>) and prints db_bench's report lines, plus
/// the managed bytes allocated per operation. Each thread runs the full operation count (as db_bench
/// does); ops/sec is the total over the wall time of the slowest thread. The workloads are written
/// once; the JIT compiles this class once per engine struct, so every call into the engine is direct.
/// The engine is opened, closed and reopened on the calling thread only; benchmark threads use it
/// while it is open.
/// </summary>
internal sealed partial class BenchRunner<TEngine, TIterator, TBatch>
    where TEngine : struct, IBenchEngine<TIterator, TBatch>
    where TIterator : struct, IBenchIterator
    where TBatch : struct, IBenchBatch
{
    private static readonly CultureInfo s_c = CultureInfo.InvariantCulture;

    // db_bench's memstats properties, in its order.
    private static readonly string[] s_memStats =
    [
        "rocksdb.num-immutable-mem-table", "rocksdb.cur-size-active-mem-table", "rocksdb.cur-size-all-mem-tables",
        "rocksdb.size-all-mem-tables", "rocksdb.num-entries-active-mem-table", "rocksdb.num-entries-imm-mem-tables",
    ];

    private readonly BenchFlags _f;

    // A mutable struct: used in place through this field, never copied.
    private TEngine _engine;

    // Held while the engine opens or closes, and by the memory sampler while it reads the engine.
    private readonly object _engineGate = new();
    private MemorySampler? _sampler;

    public BenchRunner(BenchFlags flags, TEngine engine)
    {
        _f = flags;
        _engine = engine;
    }

    public int Run()
    {
        try
        {
            if (!_f.UseExistingDb && Directory.Exists(_f.Db))
            {
                Directory.Delete(_f.Db, recursive: true);
            }
            lock (_engineGate)
            {
                _engine.Open();
            }
            _sampler = new MemorySampler(_engineGate, SampleEngineMemory, _f.MemorySampleMs);
            PrintHeader();
            try
            {
                foreach (string name in _f.Benchmarks.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
                {
                    _sampler.Phase = name;
                    RunOne(name);
                }
            }
            finally
            {
                _sampler.Phase = "end";
                MemoryReport.Print(Console.Out, _sampler);
                _sampler.Dispose();
                _engine.PrintReport(Console.Out);
            }
        }
        finally
        {
            _sampler?.Dispose();
            _engine.Dispose();
        }
        return 0;
    }

    private EngineMemory SampleEngineMemory() => _engine.SampleMemory();

    private void RunOne(string name)
    {
        Action<ThreadState>? method = name switch
        {
            "fillseq" => WriteSeq,
            "fillrandom" or "overwrite" => WriteRandom,
            "fillsync" => WriteRandom,
            "readrandom" => ReadRandom,
            "readseq" => ReadSeq,
            "readreverse" => ReadReverse,
            "seekrandom" => SeekRandom,
            "deleterandom" => DeleteRandom,
            "readwhilewriting" => ReadRandom,
            "mergerandom" => MergeRandom,
            "readrandommergerandom" => ReadRandomMergeRandom,
            "multireadrandom" => MultiReadRandom,
            "stats" or "sstables" or "waitforcompaction" or "flush" or "compact" or "block_cache_entry_stats" or "memstats" => null,
            _ => throw new ArgumentException($"unknown benchmark '{name}'"),
        };
        if (method == null)
        {
            if (name == "waitforcompaction")
            {
                WaitForCompaction();
            }
            else if (name == "flush")
            {
                Console.WriteLine("flush memtable"); // db_bench's line; the memtables go to level 0 before the next benchmark
                _engine.Flush();
            }
            else if (name == "compact")
            {
                // db_bench's compact: CompactRange over everything, timed.
                long t0 = Stopwatch.GetTimestamp();
                _engine.CompactAll();
                Console.WriteLine(string.Create(s_c, $"compact      : {Stopwatch.GetElapsedTime(t0).TotalSeconds:F3} seconds"));
            }
            else if (name == "block_cache_entry_stats")
            {
                Console.WriteLine(_engine.GetProperty("rocksdb.block-cache-entry-stats"));
            }
            else if (name == "memstats")
            {
                // db_bench's memstats: the memtable properties, one "name: value" line each.
                foreach (string property in s_memStats)
                {
                    Console.WriteLine($"{property}: {_engine.GetProperty(property)}");
                }
            }
            else
            {
                Console.WriteLine(name == "stats" ? _engine.GetProperty("rocksdb.stats") : _engine.SsTables());
            }
            return;
        }
        bool fresh = name is "fillseq" or "fillrandom" or "fillsync";
        if (fresh)
        {
            if (_f.UseExistingDb)
            {
                Console.WriteLine($"{name,-12} : skipped (--use_existing_db is true)");
                return;
            }
            lock (_engineGate)
            {
                _engine.Close();
                Directory.Delete(_f.Db, recursive: true);
                _engine.Open();
            }
        }
        _syncWrites = name == "fillsync" || _f.Sync;
        _opsPerThread = name switch
        {
            "fillsync" => Math.Max(1, _f.Num / 1000),
            "readrandom" or "readseq" or "readreverse" or "seekrandom" or "readwhilewriting" or "multireadrandom" => _f.ReadCount,
            "fillseq" or "fillrandom" or "overwrite" => _f.WriteCount,
            "mergerandom" or "readrandommergerandom" => _f.ReadWriteCount,
            _ => _f.Num,
        };
        ThreadState[] states = RunThreads(method, name == "readwhilewriting", out long processAllocated);
        Report(name, states, processAllocated);
    }

    private long _opsPerThread;
    private long _benchStart;
    private long _totalThreadCount;
    private bool _syncWrites;
    private volatile bool _readersDone;

    /// <param name="processAllocated">Managed bytes the whole process allocated while the benchmark ran.</param>
    private ThreadState[] RunThreads(Action<ThreadState> method, bool withWriter, out long processAllocated)
    {
        var states = new ThreadState[_f.Threads];
        for (int i = 0; i < states.Length; i++)
        {
            states[i] = new ThreadState(i, _totalThreadCount++, _f);
        }
        _readersDone = false;
        ThreadState? ws = withWriter ? new ThreadState(_f.Threads, _totalThreadCount++, _f) : null;
        // Process-wide managed allocation from here to the last join: the benchmark threads, the
        // readwhilewriting writer, and the engine's own background work (flush, compaction).
        long allocatedBefore = GC.GetTotalAllocatedBytes(precise: true);
        Thread? writer = null;
        if (ws != null)
        {
            writer = new Thread(() => BackgroundWriter(ws)) { IsBackground = true };
            writer.Start();
        }
        using var start = new Barrier(states.Length, _ => _benchStart = Stopwatch.GetTimestamp());
        using var stopReporter = new CancellationTokenSource();
        Thread? reporter = null;
        if (_f.ReportIntervalSeconds > 0)
        {
            reporter = new Thread(() => Reporter(states, _f.ReportIntervalSeconds, stopReporter.Token)) { IsBackground = true };
            reporter.Start();
        }
        var threads = new Thread[states.Length];
        for (int i = 0; i < threads.Length; i++)
        {
            ThreadState s = states[i];
            threads[i] = new Thread(() =>
            {
                start.SignalAndWait();
                long allocated = GC.GetAllocatedBytesForCurrentThread();
                long t0 = Stopwatch.GetTimestamp();
                method(s);
                s.Seconds = Stopwatch.GetElapsedTime(t0).TotalSeconds;
                s.AllocatedBytes = GC.GetAllocatedBytesForCurrentThread() - allocated;
            });
            threads[i].Start();
        }
        foreach (Thread t in threads)
        {
            t.Join();
        }
        _readersDone = true;
        writer?.Join();
        stopReporter.Cancel();
        reporter?.Join();
        processAllocated = GC.GetTotalAllocatedBytes(precise: true) - allocatedBefore;
        return states;
    }

    /// <summary>db_bench's Duration: a fixed op count, or with -duration a time budget checked every 256 ops.</summary>
    private bool KeepGoing(long i)
    {
        if (_f.Duration <= 0)
        {
            return i < _opsPerThread;
        }
        return (i & 255) != 0 || Stopwatch.GetElapsedTime(_benchStart).TotalSeconds < _f.Duration;
    }

    /// <summary>db_bench's -report_interval_seconds lines: interval and cumulative ops and rates.</summary>
    private static void Reporter(ThreadState[] states, int intervalSeconds, CancellationToken stop)
    {
        long start = Stopwatch.GetTimestamp();
        long lastOps = 0;
        double lastSeconds = 0;
        while (!stop.WaitHandle.WaitOne(TimeSpan.FromSeconds(intervalSeconds)))
        {
            long ops = 0;
            foreach (ThreadState s in states)
            {
                ops += s.Done;
            }
            double seconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
            double dt = seconds - lastSeconds;
            Console.WriteLine(string.Create(s_c,
                $"{DateTime.Now:yyyy/MM/dd-HH:mm:ss} ... thread 0: ({ops - lastOps},{ops}) ops and ({(ops - lastOps) / dt:F1},{ops / seconds:F1}) ops/second in ({dt:F6},{seconds:F6}) seconds"));
            lastOps = ops;
            lastSeconds = seconds;
        }
    }

    // readwhilewriting's writer (db_bench's BGWriter): random puts until the readers are done (or,
    // with -finish_after_writes, until -writes writes), a range tombstone (a separate DeleteRange
    // from a random key) when one is due.
    private void BackgroundWriter(ThreadState s)
    {
        long written = 0;
        long rangeDeletions = 0;
        while (!_readersDone)
        {
            FillKey(s.Key, s.Random.NextInt64(_f.Num));
            _engine.Put(0, s.Key, s.Values.Next(_f.ValueSize), _f.Sync); // db_bench's BGWriter writes the default family
            written++;
            if (_f.RangeTombstoneDue(written))
            {
                rangeDeletions++;
                using TBatch batch = _engine.NewBatch();
                AddRangeTombstone(batch, 0, s.Random.NextInt64(_f.Num));
                _engine.Write(batch, _f.Sync);
            }
            if (_f.FinishAfterWrites && written == _f.WriteCount)
            {
                Console.Error.WriteLine(string.Create(s_c, $"Exiting the writer after {written} writes..."));
                break;
            }
        }
        if (rangeDeletions > 0)
        {
            Console.WriteLine(string.Create(s_c, $"Number of range deletions: {rangeDeletions}"));
        }
    }

    // db_bench: DeleteRange(key begin, key begin + width), or with -expand_range_tombstones the
    // width point Deletes it stands for.
    private void AddRangeTombstone(TBatch batch, int family, long begin)
    {
        byte[] from = new byte[_f.KeySize];
        byte[] to = new byte[_f.KeySize];
        if (_f.ExpandRangeTombstones)
        {
            for (long k = 0; k < _f.RangeTombstoneWidth; k++)
            {
                FillKey(from, begin + k);
                batch.Delete(family, from);
            }
            return;
        }
        FillKey(from, begin);
        FillKey(to, begin + _f.RangeTombstoneWidth);
        batch.DeleteRange(family, from, to);
    }

    /// <summary>
    /// db_bench's GetCfh: key number <paramref name="k"/> lives in family k % -num_column_families
    /// (the fills and readrandom; deletes, iterators and readwhilewriting's writer use the default family, as db_bench).
    /// </summary>
    private int Family(long k) => _f.NumColumnFamilies <= 1 ? 0 : (int)(k % _f.NumColumnFamilies);

    private void WriteSeq(ThreadState s) => Write(s, sequential: true);

    private void WriteRandom(ThreadState s) => Write(s, sequential: false);

    private void Write(ThreadState s, bool sequential)
    {
        bool sync = _syncWrites;
        Histogram? h = s.Histogram;
        // As db_bench: with range tombstones the key space grows by their number, and a due
        // tombstone goes into the same batch as the put, starting at the generator's next key.
        long keySpace = _f.Num + _f.MaxNumRangeTombstones;
        bool withTombstones = _f.WritesPerRangeTombstone > 0;
        TBatch batch = withTombstones ? _engine.NewBatch() : default;
        long rangeDeletions = 0;
        long i = 0;
        for (; KeepGoing(i); i++)
        {
            long t0 = h != null ? Stopwatch.GetTimestamp() : 0;
            long k = sequential ? i : s.Random.NextInt64(keySpace);
            FillKey(s.Key, k);
            int family = Family(k);
            if (withTombstones && _f.RangeTombstoneDue(i + 1))
            {
                rangeDeletions++;
                batch.Clear();
                batch.Put(family, s.Key, s.Values.Next(_f.ValueSize));
                AddRangeTombstone(batch, family, sequential ? i + 1 : s.Random.NextInt64(keySpace));
                _engine.Write(batch, sync);
            }
            else
            {
                _engine.Put(family, s.Key, s.Values.Next(_f.ValueSize), sync);
            }
            s.Bytes += _f.KeySize + _f.ValueSize;
            h?.Add(Stopwatch.GetElapsedTime(t0).TotalMicroseconds);
            Progress(s, i);
        }
        s.Done = i;
        if (withTombstones)
        {
            batch.Dispose();
        }
        if (rangeDeletions > 0)
        {
            Console.WriteLine(string.Create(s_c, $"Number of range deletions: {rangeDeletions}"));
        }
    }

    private void DeleteRandom(ThreadState s)
    {
        long i = 0;
        for (; KeepGoing(i); i++)
        {
            FillKey(s.Key, s.Random.NextInt64(_f.Num));
            _engine.Delete(s.Key, _f.Sync);
            Progress(s, i);
        }
        s.Done = i;
    }

    private void ReadRandom(ThreadState s)
    {
        if (_f.InFlight > 0)
        {
            ReadRandomInFlight(s);
            return;
        }
        var value = new ArrayBufferWriter<byte>(Math.Max(16, _f.ValueSize));
        Histogram? h = s.Histogram;
        long i = 0;
        for (; KeepGoing(i); i++)
        {
            long t0 = h != null ? Stopwatch.GetTimestamp() : 0;
            long k = s.Random.NextInt64(_f.Num);
            FillKey(s.Key, k);
            value.ResetWrittenCount();
            if (_engine.TryGet(Family(k), s.Key, value))
            {
                s.Found++;
                s.Bytes += _f.KeySize + value.WrittenCount;
            }
            h?.Add(Stopwatch.GetElapsedTime(t0).TotalMicroseconds);
            Progress(s, i);
        }
        s.Done = i;
        s.Message = string.Create(s_c, $"({s.Found} of {i} found)");
    }

    // db_bench's MultiReadRandom: batches of -batch_size random keys on the default family, one
    // batched MultiGet each with -multiread_batched, else one Get per key (db_bench's vector
    // MultiGet); ops and the histogram's samples count keys and batches as db_bench's do.
    private void MultiReadRandom(ThreadState s)
    {
        int batchSize = _f.BatchSize;
        var buffers = new byte[batchSize][];
        var keys = new ReadOnlyMemory<byte>[batchSize];
        for (int j = 0; j < batchSize; j++)
        {
            buffers[j] = new byte[_f.KeySize];
            keys[j] = buffers[j];
        }
        using var results = new MultiGetResults(batchSize);
        var value = new ArrayBufferWriter<byte>(Math.Max(16, _f.ValueSize));
        Histogram? h = s.Histogram;
        long i = 0;
        while (KeepGoing(i))
        {
            long t0 = h != null ? Stopwatch.GetTimestamp() : 0;
            for (int j = 0; j < batchSize; j++)
            {
                KeyGenerator.Fill(buffers[j], s.Random.NextInt64(_f.Num));
            }
            if (_f.MultiReadBatched)
            {
                IssueMultiGet(keys, results);
                for (int j = 0; j < batchSize; j++)
                {
                    if (results.TryGetValue(j, out ReadOnlySpan<byte> v))
                    {
                        s.Found++;
                        s.Bytes += _f.KeySize + v.Length;
                    }
                }
            }
            else
            {
                GetEach(s, buffers, value);
            }
            h?.Add(Stopwatch.GetElapsedTime(t0).TotalMicroseconds);
            i += batchSize;
            Progress(s, i);
        }
        s.Done = i;
        s.Message = string.Create(s_c, $"({s.Found} of {i} found)");
    }

    // db_bench's MergeRandom: merge a generated value into a random key of the merge key space.
    private void MergeRandom(ThreadState s)
    {
        ThrowIfNoMergeOperator("mergerandom");
        Histogram? h = s.Histogram;
        long keys = _f.MergeKeySpace;
        long i = 0;
        for (; KeepGoing(i); i++)
        {
            long t0 = h != null ? Stopwatch.GetTimestamp() : 0;
            FillKey(s.Key, s.Random.NextInt64(keys));
            _engine.Merge(s.Key, s.Values.Next(_f.ValueSize), _f.Sync);
            s.Bytes += _f.KeySize + _f.ValueSize;
            h?.Add(Stopwatch.GetElapsedTime(t0).TotalMicroseconds);
            Progress(s, i);
        }
        s.Done = i;
        s.Message = string.Create(s_c, $"( updates:{_opsPerThread})");
    }

    // db_bench's ReadRandomMergeRandom: per operation, a merge with probability -mergereadpercent percent,
    // else a Get, on a random key of the merge key space.
    private void ReadRandomMergeRandom(ThreadState s)
    {
        ThrowIfNoMergeOperator("readrandommergerandom");
        var value = new ArrayBufferWriter<byte>(Math.Max(16, _f.ValueSize));
        Histogram? h = s.Histogram;
        long keys = _f.MergeKeySpace;
        long gets = 0;
        long merges = 0;
        long hits = 0;
        int maxLength = 0;
        long i = 0;
        for (; KeepGoing(i); i++)
        {
            long t0 = h != null ? Stopwatch.GetTimestamp() : 0;
            FillKey(s.Key, s.Random.NextInt64(keys));
            if (s.Random.Next(100) < _f.MergeReadPercent)
            {
                _engine.Merge(s.Key, s.Values.Next(_f.ValueSize), _f.Sync);
                merges++;
            }
            else
            {
                value.ResetWrittenCount();
                if (_engine.TryGet(0, s.Key, value))
                {
                    hits++;
                    maxLength = Math.Max(maxLength, value.WrittenCount);
                }
                gets++;
            }
            h?.Add(Stopwatch.GetElapsedTime(t0).TotalMicroseconds);
            Progress(s, i);
        }
        s.Done = i;
        s.Found = hits;
        s.Message = string.Create(s_c, $"(reads:{gets} merges:{merges} total:{_opsPerThread} hits:{hits} maxlength:{maxLength})");
    }

    private void ThrowIfNoMergeOperator(string benchmark)
    {
        if (_f.MergeOperator.Length == 0)
        {
            throw new ArgumentException($"{benchmark} needs -merge_operator (uint64add or stringappend), as db_bench's does");
        }
    }

    // db_bench's GenerateKeyFromInt(v, FLAGS_num): plain keys, or prefixed ones with -keys_per_prefix.
    private void FillKey(Span<byte> key, long number) => KeyGenerator.Fill(key, number, _f.Num, _f.KeysPerPrefix, _f.PrefixSize);

    // db_bench's SeekRandom (without -use_tailing_iterator): a new iterator for every seek, so each
    // seek reads the database as it is then. One iterator for the whole run would pin the read state
    // of its creation: a memtable still being flushed when fillrandom ends stays in every seek's merge.
    private void SeekRandom(ThreadState s)
    {
        long i = 0;
        long bytes = 0;
        for (; KeepGoing(i); i++)
        {
            FillKey(s.Key, s.Random.NextInt64(_f.Num));
            if (_f.SeekMissingPrefix)
            {
                s.Key[8] = (byte)'1'; // db_bench's GenerateKeyFromIntForSeek: the '0' padding of the prefix becomes '1'
            }
            using TIterator it = _engine.NewIterator();
            it.Seek(s.Key);
            if (it.Valid && it.Key.SequenceEqual(s.Key))
            {
                s.Found++;
            }
            for (int j = 0; j < _f.SeekNexts && it.Valid; j++)
            {
                bytes += it.Key.Length + it.Value.Length; // db_bench reads each value it steps over
                it.Next();
            }
            Progress(s, i);
        }
        s.Bytes += bytes;
        s.Done = i;
        s.Message = string.Create(s_c, $"({s.Found} of {i} found)");
    }

    private void ReadSeq(ThreadState s) => Scan(s, forward: true);

    private void ReadReverse(ThreadState s) => Scan(s, forward: false);

    private void Scan(ThreadState s, bool forward)
    {
        using TIterator it = _engine.NewIterator();
        long n = 0;
        if (forward)
        {
            it.SeekToFirst();
        }
        else
        {
            it.SeekToLast();
        }
        while (it.Valid && KeepGoing(n))
        {
            s.Bytes += it.Key.Length + it.Value.Length;
            n++;
            s.Done = n;
            if (forward)
            {
                it.Next();
            }
            else
            {
                it.Prev();
            }
        }
        s.Done = n;
    }

    private static void Progress(ThreadState s, long i)
    {
        s.Done = i;
        if (s.Id == 0 && i > 0 && i % 200_000 == 0)
        {
            Console.Error.Write(string.Create(s_c, $"... finished {i} ops{"",30}\r"));
        }
    }

    private void Report(string name, ThreadState[] states, long processAllocated)
    {
        long done = 0;
        long bytes = 0;
        long allocated = 0;
        double threadSeconds = 0;
        double wall = 0;
        Histogram? merged = _f.Histogram ? new Histogram() : null;
        foreach (ThreadState s in states)
        {
            done += s.Done;
            bytes += s.Bytes;
            allocated += s.AllocatedBytes;
            threadSeconds += s.Seconds;
            wall = Math.Max(wall, s.Seconds);
            if (s.Histogram != null)
            {
                merged!.Merge(s.Histogram);
            }
        }
        done = Math.Max(done, 1);
        string extra = bytes > 0 ? string.Create(s_c, $"{bytes / 1048576.0 / wall,6:F1} MB/s") : string.Empty;
        if (states[0].Message != null)
        {
            extra = extra.Length == 0 ? states[0].Message! : extra + " " + states[0].Message;
        }
        Console.WriteLine(string.Create(s_c,
            $"{name,-12} : {threadSeconds * 1e6 / done,11:F3} micros/op {(long)(done / wall)} ops/sec {wall:F3} seconds {done} operations;{(extra.Length == 0 ? "" : " ")}{extra}"));
        // Managed allocation per operation: on the benchmark threads (their own counters, so the
        // calls' own allocations), and in the whole process (adds background flush and compaction,
        // readwhilewriting's writer, the thread start-up).
        Console.WriteLine(string.Create(s_c,
            $"{name,-12} : allocated {(double)allocated / done:F2} B/op on benchmark threads, {(double)processAllocated / done:F2} B/op process-wide"));
        if (merged != null)
        {
            Console.WriteLine(string.Create(s_c, $"Microseconds per {(name.StartsWith("read", StringComparison.Ordinal) || name.StartsWith("seek", StringComparison.Ordinal) ? "read" : "write")}:"));
            Console.Write(merged.Format());
        }
    }

    private void PrintHeader()
    {
        Console.WriteLine("KvEngine kvbench (db_bench-compatible)");
        Console.WriteLine(string.Create(s_c, $"Engine:     {_engine.Description}"));
        Console.WriteLine(string.Create(s_c, $"Keys:       {_f.KeySize} bytes each"));
        Console.WriteLine(string.Create(s_c, $"Values:     {_f.ValueSize} bytes each ({(int)(_f.ValueSize * _f.CompressionRatio)} bytes after compression)"));
        Console.WriteLine(string.Create(s_c, $"Entries:    {_f.Num}"));
        Console.WriteLine(string.Create(s_c, $"Compression: {_f.CompressionType}"));
        Console.WriteLine(string.Create(s_c, $"Threads:    {_f.Threads}"));
        Console.WriteLine("------------------------------------------------");
        Console.WriteLine(string.Create(s_c, $"DB path: [{_f.Db}]"));
    }

    /// <summary>db_bench's waitforcompaction: until no flush or compaction runs or is pending.</summary>
    private void WaitForCompaction()
    {
        while (_engine.GetProperty("rocksdb.compaction-pending") != "0" || _engine.GetProperty("rocksdb.num-running-compactions") != "0" ||
            _engine.GetProperty("rocksdb.num-running-flushes") != "0")
        {
            Thread.Sleep(100);
        }
    }
}
