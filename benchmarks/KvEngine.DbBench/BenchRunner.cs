using System.Buffers;
using System.Diagnostics;
using System.Globalization;

namespace KvEngine.DbBench;

/// <summary>
/// Runs db_bench's benchmarks by name against KvEngine and prints db_bench's report lines.
/// Each thread runs the full operation count (as db_bench does); ops/sec is the total over the
/// wall time of the slowest thread.
/// </summary>
internal sealed class BenchRunner
{
    private static readonly CultureInfo s_c = CultureInfo.InvariantCulture;
    private readonly BenchFlags _f;
    private readonly KvStatistics? _stats;
    private KvDb? _db;
    private KvBlockCache? _blockCache;

    public BenchRunner(BenchFlags flags)
    {
        _f = flags;
        _stats = flags.Statistics ? new KvStatistics() : null;
    }

    public int Run()
    {
        if (_f.Benchmarks == "filterbench")
        {
            return new FilterBench(_f).Run();
        }
        if (_f.Benchmarks == "cachebench")
        {
            return new CacheBench(_f).Run();
        }
        PrintHeader();
        if (!_f.UseExistingDb && Directory.Exists(_f.Db))
        {
            Directory.Delete(_f.Db, recursive: true);
        }
        _db = Open();
        try
        {
            foreach (string name in _f.Benchmarks.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
            {
                RunOne(name);
            }
        }
        finally
        {
            MemoryReport.Print();
            _db.Dispose();
            if (_blockCache != null)
            {
                CacheReport.Print(_blockCache);
                _blockCache.Dispose();
            }
        }

        if (_stats != null)
        {
            Console.WriteLine("STATISTICS:");
            Console.Write(_stats.ToString());
        }
        return 0;
    }

    private KvDb Open() => KvDb.Open(_f.Db, new KvOptions
    {
        BlockCache = _blockCache ??= new KvBlockCache(_f.CacheSize, _f.CacheNumShardBits,
            compressedSecondaryCacheSize: _f.UseCompressedSecondaryCache ? _f.CompressedSecondaryCacheSize : 0,
            compressedSecondaryCacheCompression: _f.CompressedSecondaryCacheCompressionType, compressedSecondaryCacheSplit: _f.CompressedSecondaryCacheSplit),
        CacheIndexAndFilterBlocks = _f.CacheIndexAndFilterBlocks,
        PinL0FilterAndIndexBlocksInCache = _f.PinL0FilterAndIndexBlocksInCache,
        IndexType = _f.IndexType,
        PartitionFilters = _f.PartitionFilters,
        MetadataBlockSize = _f.MetadataBlockSize,
        DecouplePartitionedFilters = _f.DecouplePartitionedFilters,
        PinTopLevelIndexAndFilter = _f.PinTopLevelIndexAndFilter,
        MetadataCacheOptions = new KvMetadataCacheOptions
        {
            TopLevelIndexPinning = _f.TopLevelIndexPinning,
            PartitionPinning = _f.PartitionPinning,
            UnpartitionedPinning = _f.UnpartitionedPinning,
        },
        MaxOpenFiles = _f.OpenFiles == 0 ? -1 : _f.OpenFiles,
        CreateIfMissing = true,
        WriteBufferSize = _f.WriteBufferSize,
        MaxWriteBufferNumber = _f.MaxWriteBufferNumber,
        MinWriteBufferNumberToMerge = _f.MinWriteBufferNumberToMerge,
        Compression = _f.CompressionType,
        CompressionLevel = _f.CompressionLevel,
        Checksum = _f.ChecksumType,
        BloomBitsPerKey = _f.BloomBits < 0 ? 0 : _f.BloomBits,
        OptimizeFiltersForMemory = _f.OptimizeFiltersForMemory,
        BlockSize = _f.BlockSize,
        Statistics = _stats,
        TargetFileSizeBase = _f.TargetFileSizeBase,
        MaxBytesForLevelBase = _f.MaxBytesForLevelBase,
        MaxBytesForLevelMultiplier = _f.MaxBytesForLevelMultiplier,
        Level0FileNumCompactionTrigger = _f.Level0FileNumCompactionTrigger,
        Level0SlowdownWritesTrigger = _f.Level0SlowdownWritesTrigger,
        Level0StopWritesTrigger = _f.Level0StopWritesTrigger,
        MaxBackgroundJobs = _f.MaxBackgroundJobs,
        DisableAutoCompactions = _f.DisableAutoCompactions,
        AllowConcurrentMemtableWrite = _f.AllowConcurrentMemtableWrite,
        LevelCompactionDynamicFileSize = _f.LevelCompactionDynamicFileSize,
        LevelCompactionDynamicLevelBytes = _f.LevelCompactionDynamicLevelBytes,
        CompactionStyle = _f.CompactionStyle,
        CompactionPri = _f.CompactionPri,
        // db_bench's default 0 MB leaves RocksDB's 1 GiB.
        FifoMaxTableFilesSize = _f.FifoMaxTableFilesSizeMb > 0 ? _f.FifoMaxTableFilesSizeMb << 20 : 1L << 30,
        FifoAllowCompaction = _f.FifoAllowCompaction,
    });

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
            "stats" or "sstables" or "waitforcompaction" or "flush" or "block_cache_entry_stats" => null,
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
                _db!.Flush();
            }
            else if (name == "block_cache_entry_stats")
            {
                Console.WriteLine(_db!.GetProperty("rocksdb.block-cache-entry-stats"));
            }
            else
            {
                Console.WriteLine(name == "stats" ? _db!.GetProperty("rocksdb.stats") : SsTables());
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
            _db!.Dispose();
            Directory.Delete(_f.Db, recursive: true);
            _db = Open();
        }
        _syncWrites = name == "fillsync" || _f.Sync;
        _opsPerThread = name switch
        {
            "fillsync" => Math.Max(1, _f.Num / 1000),
            "readrandom" or "readseq" or "readreverse" or "seekrandom" or "readwhilewriting" => _f.ReadCount,
            "fillseq" or "fillrandom" or "overwrite" => _f.WriteCount,
            _ => _f.Num,
        };
        ThreadState[] states = RunThreads(method, name == "readwhilewriting");
        Report(name, states);
    }

    private long _opsPerThread;
    private long _benchStart;
    private long _totalThreadCount;
    private bool _syncWrites;
    private volatile bool _readersDone;

    private ThreadState[] RunThreads(Action<ThreadState> method, bool withWriter)
    {
        var states = new ThreadState[_f.Threads];
        for (int i = 0; i < states.Length; i++)
        {
            states[i] = new ThreadState(i, _totalThreadCount++, _f);
        }
        _readersDone = false;
        Thread? writer = null;
        if (withWriter)
        {
            var ws = new ThreadState(_f.Threads, _totalThreadCount++, _f);
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
                long t0 = Stopwatch.GetTimestamp();
                method(s);
                s.Seconds = Stopwatch.GetElapsedTime(t0).TotalSeconds;
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
        var wo = new WriteOptions { Sync = _f.Sync, DisableWal = _f.DisableWal };
        long written = 0;
        long rangeDeletions = 0;
        while (!_readersDone)
        {
            KeyGenerator.Fill(s.Key, s.Random.NextInt64(_f.Num));
            _db!.Put(s.Key, s.Values.Next(_f.ValueSize), wo);
            written++;
            if (_f.RangeTombstoneDue(written))
            {
                rangeDeletions++;
                using var batch = new WriteBatch();
                AddRangeTombstone(batch, s.Random.NextInt64(_f.Num));
                _db.Write(batch, wo);
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
    private void AddRangeTombstone(WriteBatch batch, long begin)
    {
        byte[] from = new byte[_f.KeySize];
        byte[] to = new byte[_f.KeySize];
        if (_f.ExpandRangeTombstones)
        {
            for (long k = 0; k < _f.RangeTombstoneWidth; k++)
            {
                KeyGenerator.Fill(from, begin + k);
                batch.Delete(from);
            }
            return;
        }
        KeyGenerator.Fill(from, begin);
        KeyGenerator.Fill(to, begin + _f.RangeTombstoneWidth);
        batch.DeleteRange(from, to);
    }

    private void WriteSeq(ThreadState s) => Write(s, sequential: true);

    private void WriteRandom(ThreadState s) => Write(s, sequential: false);

    private void Write(ThreadState s, bool sequential)
    {
        var wo = new WriteOptions { Sync = _syncWrites, DisableWal = _f.DisableWal };
        Histogram? h = s.Histogram;
        // As db_bench: with range tombstones the key space grows by their number, and a due
        // tombstone goes into the same batch as the put, starting at the generator's next key.
        long keySpace = _f.Num + _f.MaxNumRangeTombstones;
        using WriteBatch? batch = _f.WritesPerRangeTombstone > 0 ? new WriteBatch() : null;
        long rangeDeletions = 0;
        long i = 0;
        for (; KeepGoing(i); i++)
        {
            long t0 = h != null ? Stopwatch.GetTimestamp() : 0;
            KeyGenerator.Fill(s.Key, sequential ? i : s.Random.NextInt64(keySpace));
            if (batch != null && _f.RangeTombstoneDue(i + 1))
            {
                rangeDeletions++;
                batch.Clear();
                batch.Put(s.Key, s.Values.Next(_f.ValueSize));
                AddRangeTombstone(batch, sequential ? i + 1 : s.Random.NextInt64(keySpace));
                _db!.Write(batch, wo);
            }
            else
            {
                _db!.Put(s.Key, s.Values.Next(_f.ValueSize), wo);
            }
            s.Bytes += _f.KeySize + _f.ValueSize;
            h?.Add(Stopwatch.GetElapsedTime(t0).TotalMicroseconds);
            Progress(s, i);
        }
        s.Done = i;
        if (rangeDeletions > 0)
        {
            Console.WriteLine(string.Create(s_c, $"Number of range deletions: {rangeDeletions}"));
        }
    }

    private void DeleteRandom(ThreadState s)
    {
        var wo = new WriteOptions { Sync = _f.Sync, DisableWal = _f.DisableWal };
        long i = 0;
        for (; KeepGoing(i); i++)
        {
            KeyGenerator.Fill(s.Key, s.Random.NextInt64(_f.Num));
            _db!.Delete(s.Key, wo);
            Progress(s, i);
        }
        s.Done = i;
    }

    private void ReadRandom(ThreadState s)
    {
        var value = new ArrayBufferWriter<byte>(Math.Max(16, _f.ValueSize));
        var ro = new ReadOptions { VerifyChecksums = _f.VerifyChecksum };
        Histogram? h = s.Histogram;
        long i = 0;
        for (; KeepGoing(i); i++)
        {
            long t0 = h != null ? Stopwatch.GetTimestamp() : 0;
            KeyGenerator.Fill(s.Key, s.Random.NextInt64(_f.Num));
            value.ResetWrittenCount();
            if (_db!.TryGet(s.Key, value, ro))
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

    private void SeekRandom(ThreadState s)
    {
        var ro = new ReadOptions { VerifyChecksums = _f.VerifyChecksum };
        using KvIterator it = _db!.NewIterator(ro);
        long i = 0;
        for (; KeepGoing(i); i++)
        {
            KeyGenerator.Fill(s.Key, s.Random.NextInt64(_f.Num));
            it.Seek(s.Key);
            if (it.Valid && it.Key.SequenceEqual(s.Key))
            {
                s.Found++;
            }
            Progress(s, i);
        }
        s.Done = i;
        s.Message = string.Create(s_c, $"({s.Found} of {i} found)");
    }

    private void ReadSeq(ThreadState s) => Scan(s, forward: true);

    private void ReadReverse(ThreadState s) => Scan(s, forward: false);

    private void Scan(ThreadState s, bool forward)
    {
        var ro = new ReadOptions { VerifyChecksums = _f.VerifyChecksum };
        using KvIterator it = _db!.NewIterator(ro);
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

    private void Report(string name, ThreadState[] states)
    {
        long done = 0;
        long bytes = 0;
        double threadSeconds = 0;
        double wall = 0;
        Histogram? merged = _f.Histogram ? new Histogram() : null;
        foreach (ThreadState s in states)
        {
            done += s.Done;
            bytes += s.Bytes;
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
        if (merged != null)
        {
            Console.WriteLine(string.Create(s_c, $"Microseconds per {(name.StartsWith("read", StringComparison.Ordinal) || name.StartsWith("seek", StringComparison.Ordinal) ? "read" : "write")}:"));
            Console.Write(merged.Format());
        }
    }

    private void PrintHeader()
    {
        Console.WriteLine("KvEngine kvbench (db_bench-compatible)");
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
        while (_db!.GetProperty("rocksdb.compaction-pending") != "0" || _db.GetProperty("rocksdb.num-running-compactions") != "0" ||
            _db.GetProperty("rocksdb.num-running-flushes") != "0")
        {
            Thread.Sleep(100);
        }
    }

    /// <summary>db_bench's sstables: the live table files per level, one " number:size" line each.</summary>
    private string SsTables()
    {
        var sb = new System.Text.StringBuilder();
        Db.Version v = _db!.Impl.Versions.Current;
        for (int level = 0; level < Db.Version.NumLevels; level++)
        {
            sb.Append("--- level ").Append(level).Append(" ---\n");
            foreach (Manifest.FileMetaData f in v.Files(level))
            {
                sb.Append(' ').Append(f.Number).Append(':').Append(f.FileSize).Append('\n');
            }
        }
        return sb.ToString();
    }
}
