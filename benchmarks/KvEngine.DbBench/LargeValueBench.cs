using System.Buffers;
using System.Diagnostics;
using System.Globalization;
using KvEngine.DbBench.Engines;

namespace KvEngine.DbBench;

/// <summary>
/// kvbench -benchmarks=largevalue: the memory one huge value costs. Opens a fresh database (the
/// usual option flags apply), Puts one value of -value_size bytes, Flushes, CompactRange's, reads
/// it back with Get (a byte[]), TryGet (into a streaming <see cref="IBufferWriter{T}"/> that checks
/// each chunk and keeps none), an iterator, then closes without flushing after a second Put and
/// reads that one back from the WAL on reopen. Before each stage the kernel's peak-RSS counter is
/// reset (writing 5 to /proc/self/clear_refs) and after it VmHWM and VmRSS from /proc/self/status
/// are printed, so every stage's line is that stage's own peak; the ratio column is that peak less
/// the RSS right after the open, over the value's size. The value is made from a seeded
/// generator one MiB chunk at a time (so checks regenerate it instead of keeping a copy) in native
/// memory; the caller's copy is freed right after the Put, so the later stages measure the engine
/// alone. -compression_ratio below 1 makes it compressible as db_bench's values
/// are; 1 or more makes it random bytes. Single-threaded; Linux only (elsewhere the figures read 0).
/// </summary>
internal sealed class LargeValueBench
{
    private const int ChunkSize = 1 << 20;
    private static readonly CultureInfo s_c = CultureInfo.InvariantCulture;
    private static readonly byte[] s_key = "large-value-key-0"u8.ToArray();
    private static readonly byte[] s_walKey = "large-value-key-1"u8.ToArray();

    private readonly BenchFlags _f;
    private readonly long _size;
    private long _baseline;

    public LargeValueBench(BenchFlags flags)
    {
        _f = flags;
        _size = flags.ValueSize;
    }

    public int Run()
    {
        Console.WriteLine(string.Create(s_c,
            $"largevalue: value_size={_size} ({_size / (double)(1 << 20):F1} MiB) compression={_f.CompressionType} compression_ratio={_f.CompressionRatio} block_size={_f.BlockSize} write_buffer_size={_f.WriteBufferSize} db={_f.Db}"));
        Console.WriteLine("stage        rss_before_mb  peak_rss_mb  rss_after_mb  (peak-base)/value  seconds");
        if (Directory.Exists(_f.Db))
        {
            Directory.Delete(_f.Db, recursive: true);
        }
        var engine = new KvEngineBench(_f);
        KvOptions options = engine.Options();
        KvDb db = Stage("open", () => KvDb.Open(_f.Db, options));
        _baseline = ReadStatus().Rss;
        NativeValue value = Stage("make_value", () => Make(_size));
        Stage("put", () => db.Put(s_key, value.Span));
        Stage("drop_value", () =>
        {
            value.Dispose();
            Compact();
        });
        Stage("flush", db.Flush);
        // Two small keys around the value in a second L0 file, so the CompactRange rewrites the value
        // (one L0 file alone would be moved to the bottom level without being read).
        Stage("compact", () =>
        {
            db.Put("large-value-key-"u8, "small"u8);
            db.Put("large-value-key-00"u8, "small"u8);
            db.Flush();
            db.CompactRange(null, null);
        });
        Stage("get", () =>
        {
            byte[] got = db.Get(s_key) ?? throw new InvalidOperationException("Get found nothing");
            Check(got);
        });
        Stage("drop_get", Compact);
        Stage("tryget", () =>
        {
            var sink = new CheckingWriter(this);
            if (!db.TryGet(s_key, sink))
            {
                throw new InvalidOperationException("TryGet found nothing");
            }
            sink.Finish();
        });
        Stage("iterator", () =>
        {
            using KvIterator it = db.NewIterator();
            it.Seek(s_key);
            if (!it.Valid || !it.Key.SequenceEqual(s_key))
            {
                throw new InvalidOperationException("the iterator did not find the key");
            }
            Check(it.Value);
        });
        // A second value that stays in the WAL only: the reopen replays it.
        Stage("put_wal", () =>
        {
            using NativeValue v = Make(_size);
            db.Put(s_walKey, v.Span);
        });
        Stage("close", () =>
        {
            db.Dispose();
            Compact();
        });
        KvOptions reopenOptions = new KvEngineBench(_f).Options();
        db = Stage("reopen_wal", () => KvDb.Open(_f.Db, reopenOptions));
        Stage("get_wal", () =>
        {
            var sink = new CheckingWriter(this);
            if (!db.TryGet(s_walKey, sink))
            {
                throw new InvalidOperationException("TryGet after reopen found nothing");
            }
            sink.Finish();
        });
        db.Dispose();
        return 0;
    }

    private static void Compact()
    {
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        GC.WaitForPendingFinalizers();
        System.Runtime.GCSettings.LargeObjectHeapCompactionMode = System.Runtime.GCLargeObjectHeapCompactionMode.CompactOnce;
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
    }

    private void Stage(string name, Action action) => Stage(name, () =>
    {
        action();
        return 0;
    });

    private T Stage<T>(string name, Func<T> action)
    {
        ResetPeak();
        long before = ReadStatus().Rss;
        long start = Stopwatch.GetTimestamp();
        T result = action();
        double seconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
        (long hwm, long rss) = ReadStatus();
        Console.WriteLine(string.Create(s_c,
            $"{name,-12} {before / 1048576.0,13:F1}  {hwm / 1048576.0,11:F1}  {rss / 1048576.0,12:F1}  {(hwm - _baseline) / (double)Math.Max(1, _size),17:F2}  {seconds,7:F2}"));
        return result;
    }

    private static void ResetPeak()
    {
        try
        {
            File.WriteAllText("/proc/self/clear_refs", "5");
        }
        catch (IOException)
        {
        }
        catch (UnauthorizedAccessException)
        {
        }
    }

    /// <summary>VmHWM and VmRSS in bytes (0 where /proc/self/status is missing).</summary>
    private static (long Hwm, long Rss) ReadStatus()
    {
        long hwm = 0, rss = 0;
        if (!File.Exists("/proc/self/status"))
        {
            return (0, 0);
        }
        foreach (string line in File.ReadLines("/proc/self/status"))
        {
            if (line.StartsWith("VmHWM:", StringComparison.Ordinal))
            {
                hwm = Kb(line);
            }
            else if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
            {
                rss = Kb(line);
            }
        }
        return (hwm, rss);

        static long Kb(string line) => long.Parse(line.AsSpan(6).Trim().TrimEnd("kB").Trim(), s_c) * 1024;
    }

    /// <summary>The caller's copy of the value, in native memory so that dropping it gives it back to the system at once.</summary>
    private NativeValue Make(long size)
    {
        var value = new NativeValue(checked((int)size));
        Span<byte> span = value.Span;
        for (long at = 0; at < size; at += ChunkSize)
        {
            Fill(at / ChunkSize, span.Slice((int)at, (int)Math.Min(ChunkSize, size - at)));
        }
        return value;
    }

    /// <summary>Bytes from the C allocator (a mapping of their own at this size, unmapped when freed). Dispose once.</summary>
    private sealed unsafe class NativeValue(int length) : IDisposable
    {
        private byte* _data = (byte*)System.Runtime.InteropServices.NativeMemory.Alloc((nuint)length);

        public Span<byte> Span => new(_data, length);

        public void Dispose()
        {
            System.Runtime.InteropServices.NativeMemory.Free(_data);
            _data = null;
        }
    }

    /// <summary>Chunk <paramref name="index"/> of the value: random bytes, or db_bench-style compressible pieces.</summary>
    private void Fill(long index, Span<byte> chunk)
    {
        var rng = new SplitMix64((ulong)index * 0x9E3779B97F4A7C15UL + (ulong)_f.Seed);
        if (_f.CompressionRatio >= 1)
        {
            for (int i = 0; i < chunk.Length; i++)
            {
                chunk[i] = (byte)rng.Next();
            }
            return;
        }
        int raw = Math.Max(1, (int)(100 * _f.CompressionRatio));
        Span<byte> piece = stackalloc byte[raw];
        for (int at = 0; at < chunk.Length; at += 100)
        {
            for (int i = 0; i < raw; i++)
            {
                piece[i] = (byte)(' ' + (int)rng.Below(95));
            }
            for (int i = 0; i < 100 && at + i < chunk.Length; i++)
            {
                chunk[at + i] = piece[i % raw];
            }
        }
    }

    private void Check(ReadOnlySpan<byte> got)
    {
        if (got.Length != _size)
        {
            throw new InvalidOperationException(string.Create(s_c, $"read {got.Length} bytes, wrote {_size}"));
        }
        byte[] expected = new byte[ChunkSize];
        for (long at = 0; at < _size; at += ChunkSize)
        {
            int n = (int)Math.Min(ChunkSize, _size - at);
            Fill(at / ChunkSize, expected.AsSpan(0, n));
            if (!got.Slice((int)at, n).SequenceEqual(expected.AsSpan(0, n)))
            {
                throw new InvalidOperationException(string.Create(s_c, $"the value read back differs in the chunk at {at}"));
            }
        }
    }

    /// <summary>An <see cref="IBufferWriter{T}"/> that checks what it is given chunk by chunk and keeps only one chunk.</summary>
    private sealed class CheckingWriter(LargeValueBench bench) : IBufferWriter<byte>
    {
        private readonly byte[] _buffer = new byte[ChunkSize];
        private readonly byte[] _expected = new byte[ChunkSize];
        private int _filled;
        private long _checked;

        public void Advance(int count)
        {
            _filled += count;
            if (_filled == ChunkSize)
            {
                Flush();
            }
        }

        public Memory<byte> GetMemory(int sizeHint = 0) => _buffer.AsMemory(_filled);

        public Span<byte> GetSpan(int sizeHint = 0) => _buffer.AsSpan(_filled);

        public void Finish()
        {
            Flush();
            if (_checked != bench._size)
            {
                throw new InvalidOperationException(string.Create(s_c, $"TryGet wrote {_checked} bytes, the value has {bench._size}"));
            }
        }

        private void Flush()
        {
            if (_filled == 0)
            {
                return;
            }
            bench.Fill(_checked / ChunkSize, _expected.AsSpan(0, _filled));
            if (!_buffer.AsSpan(0, _filled).SequenceEqual(_expected.AsSpan(0, _filled)))
            {
                throw new InvalidOperationException(string.Create(s_c, $"TryGet's value differs in the chunk at {_checked}"));
            }
            _checked += _filled;
            _filled = 0;
        }
    }
}
