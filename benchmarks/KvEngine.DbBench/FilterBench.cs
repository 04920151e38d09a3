using System.Buffers.Binary;
using System.Diagnostics;
using System.Globalization;
using System.Runtime.CompilerServices;
using KvEngine.Filters;
using KvEngine.Memory;

namespace KvEngine.DbBench;

/// <summary>
/// kvbench -benchmarks=filterbench: RocksDB's util/filter_bench.cc for KvEngine's FastLocalBloom
/// filters, with its key maker, key-count variation, memory/key limits and report lines. Filters
/// are built straight into native memory from a private <see cref="NativeAllocator"/> (the bit
/// array alone, as the table reader holds it), so "Reported total allocated memory" is the sum of
/// usable sizes and fragmentation compares it with the bytes requested. Differences from
/// filter_bench: -quick only divides the queries by 7 and skips the full no-false-negative pass
/// (every query still checks inside keys); the inside and outside query blocks always run.
/// Single-threaded.
/// </summary>
internal sealed class FilterBench
{
    private static readonly CultureInfo s_c = CultureInfo.InvariantCulture;

    private readonly BenchFlags _f;
    private readonly FilterBenchFlags _fb;
    private readonly List<FilterInfo> _infos = [];
    private readonly byte[] _keyBuffer;
    private readonly int _smallestKey;
    private ulong _rng;
    private double _lastFpRate;
    private ulong _dryHash;

    public FilterBench(BenchFlags flags)
    {
        _f = flags;
        _fb = flags.Filter;
        _smallestKey = _fb.KeySize - 2;
        _keyBuffer = new byte[_fb.KeySize + 11];
    }

    public int Run()
    {
        Console.WriteLine(string.Create(s_c,
            $"filterbench: bits_per_key={_fb.BitsPerKey} average_keys_per_filter={_fb.AverageKeysPerFilter} vary_key_count_ratio={_fb.VaryKeyCountRatio} optimize_filters_for_memory={_f.OptimizeFiltersForMemory} working_mem_size_mb={_fb.WorkingMemSizeMb} m_keys_total_max={_fb.MKeysTotalMax} m_queries={_fb.MQueries}{(_fb.Quick ? " quick" : "")}"));
        using var allocator = new NativeAllocator(new NativeAllocatorOptions { DebugChecks = false });
        try
        {
            Build(allocator);
            if (!_fb.Quick)
            {
                Verify();
            }
            double queries = _fb.MQueries * 1e6 / (_fb.Quick ? 7 : 1);
            QueryBlock("Mixed inside/outside queries...", uint.MaxValue / 2, (ulong)_f.Seed + 1, queries);
            QueryBlock("Inside queries (mostly)...", uint.MaxValue / 20 * 19, (ulong)_f.Seed + 1, queries);
            QueryBlock("Outside queries (mostly)...", uint.MaxValue / 20, (ulong)_f.Seed + 2, queries);
            Console.WriteLine(string.Create(s_c, $"    Average FP rate %: {100.0 * _lastFpRate:G6}"));
            Console.WriteLine("----------------------------");
        }
        finally
        {
            foreach (FilterInfo info in _infos)
            {
                info.Reader?.Dispose();
            }
        }
        MemoryUsage after = allocator.GetUsage();
        Console.WriteLine(string.Create(s_c, $"Done. Live allocations after freeing every filter: {after.LiveAllocations} ({after.AllocatedBytes} bytes)."));
        return after.LiveAllocations == 0 ? 0 : 1;
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private void Build(NativeAllocator allocator)
    {
        Console.WriteLine("Building...");
        _rng = (ulong)_f.Seed * 0x9E3779B97F4A7C15UL + 0x2545F4914F6CDD1DUL;
        var policy = new FastLocalBloomPolicy(_fb.BitsPerKey);
        using FastLocalBloomBitsBuilder builder = policy.CreateBuilder(_f.OptimizeFiltersForMemory);
        uint varianceRange = 1 + (2 * (uint)(_fb.VaryKeyCountRatio * _fb.AverageKeysPerFilter));
        uint varianceOffset = varianceRange / 2;
        long maxKeys = _fb.MKeysTotalMax > 0 ? (long)(1e6 * _fb.MKeysTotalMax) : long.MaxValue;
        long maxBytes = _fb.MKeysTotalMax > 0 ? long.MaxValue : (long)(1024 * 1024 * _fb.WorkingMemSizeMb);
        long totalSize = 0;
        long totalKeys = 0;
        long finishTicks = 0;
        long start = Stopwatch.GetTimestamp();
        while ((_fb.MKeysTotalMax > 0 || _fb.WorkingMemSizeMb == 0 || totalSize < maxBytes) && totalKeys < maxKeys)
        {
            uint id = NextRandom();
            long want = _fb.AverageKeysPerFilter + FastRange(NextRandom(), varianceRange) - (long)varianceOffset;
            uint keys = (uint)Math.Clamp(Math.Min(want, maxKeys - totalKeys), 1, uint.MaxValue);
            for (uint i = 0; i < keys; i++)
            {
                builder.AddKey(Key(id, i));
            }
            long finishStart = Stopwatch.GetTimestamp();
            FastLocalBloomNativeReader? reader = builder.FinishInMemory(allocator);
            finishTicks += Stopwatch.GetTimestamp() - finishStart;
            _infos.Add(new FilterInfo(id, keys, reader));
            totalSize += reader?.FilterBlockLength ?? 5;
            totalKeys += keys;
        }
        double seconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
        MemoryUsage usage = allocator.GetUsage();
        const double Mb = 1024.0 * 1024.0;
        Console.WriteLine(string.Create(s_c, $"Build avg ns/key: {seconds * 1e9 / totalKeys:G6}"));
        Console.WriteLine(string.Create(s_c, $"  of which finishing (sizing, allocating, setting bits) ns/key: {finishTicks * 1e9 / Stopwatch.Frequency / totalKeys:G6}"));
        Console.WriteLine(string.Create(s_c, $"Number of filters: {_infos.Count}"));
        Console.WriteLine(string.Create(s_c, $"Total size (MB): {totalSize / Mb:G6}"));
        Console.WriteLine(string.Create(s_c, $"In-memory bit arrays requested (MB): {usage.RequestedBytes / Mb:G6}"));
        Console.WriteLine(string.Create(s_c, $"Reported total allocated memory (MB): {usage.AllocatedBytes / Mb:G6}"));
        Console.WriteLine(string.Create(s_c, $"Reported internal fragmentation: {100.0 * usage.InternalFragmentation:G6}%"));
        Console.WriteLine(string.Create(s_c, $"Resident (slabs + large) (MB): {usage.ResidentBytes / Mb:G6}"));
        Console.WriteLine(string.Create(s_c, $"Bits/key stored: {totalSize * 8.0 / totalKeys:G6}"));
        if (_f.OptimizeFiltersForMemory)
        {
            Console.WriteLine(string.Create(s_c, $"Rounding balance (FP x 2^32): {policy.MemoryOptimizer.Balance}"));
        }
    }

    private void Verify()
    {
        Console.WriteLine("----------------------------");
        Console.WriteLine("Verifying...");
        foreach (FilterInfo info in _infos)
        {
            for (uint j = 0; j < info.Keys; j++)
            {
                if (info.Reader == null || !info.Reader.MayMatch(Key(info.Id, j)))
                {
                    throw new InvalidOperationException($"False negative: filter {info.Id}, key {j}");
                }
            }
        }
        Console.WriteLine(" No FNs :)");
    }

    private void QueryBlock(string title, uint insideThreshold, ulong seed, double queries)
    {
        Console.WriteLine("----------------------------");
        Console.WriteLine(title);
        foreach (bool single in (ReadOnlySpan<bool>)[true, false])
        {
            _rng = seed;
            double gross = QueryTest(insideThreshold, dryRun: false, single, (long)queries);
            _rng = seed;
            double dry = QueryTest(insideThreshold, dryRun: true, single, (long)queries);
            Console.WriteLine(string.Create(s_c, $"  {(single ? "Single filter" : "Random filter")} net ns/op: {gross - dry:G6} (gross {gross:G6}, dry run with hashing {dry:G6}, {_dryHash & 0xfffff:x5})"));
        }
    }

    /// <summary>filter_bench's RandomQueryTest: ns per query; records outside queries and false positives.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private double QueryTest(uint insideThreshold, bool dryRun, bool single, long queries)
    {
        foreach (FilterInfo info in _infos)
        {
            info.OutsideQueries = 0;
            info.FalsePositives = 0;
        }
        uint count = (uint)_infos.Count;
        ulong dryHash = 0;
        long start = Stopwatch.GetTimestamp();
        for (long q = 0; q < queries; q++)
        {
            bool inside = NextRandom() <= insideThreshold;
            FilterInfo info = _infos[single ? 0 : (int)FastRange(NextRandom(), count)];
            uint val = FastRange(NextRandom(), info.Keys);
            ReadOnlySpan<byte> key = Key(info.Id, inside ? val : val | 0x80000000);
            bool match;
            if (dryRun)
            {
                dryHash += XxPh3.Hash64(key);
                match = true;
            }
            else
            {
                match = info.Reader != null && info.Reader.MayMatch(key);
            }
            if (inside)
            {
                if (!match)
                {
                    throw new InvalidOperationException($"False negative: filter {info.Id}, key {val}");
                }
            }
            else
            {
                info.OutsideQueries++;
                info.FalsePositives += match ? 1 : 0;
            }
        }
        double ns = Stopwatch.GetElapsedTime(start).TotalNanoseconds / queries;
        if (!dryRun)
        {
            long outside = 0;
            long fps = 0;
            foreach (FilterInfo info in _infos)
            {
                outside += info.OutsideQueries;
                fps += info.FalsePositives;
            }
            _lastFpRate = outside == 0 ? 0 : (double)fps / outside;
        }
        else
        {
            _dryHash = dryHash; // printed, so the dry run's hashing cannot be optimized away
        }
        return ns;
    }

    /// <summary>filter_bench's KeyMaker::Get: fixed32 val, fixed32 filter+val, zeros; 22..26 bytes at offsets 0..3.</summary>
    private ReadOnlySpan<byte> Key(uint filterNum, uint valNum)
    {
        Span<byte> data = _keyBuffer.AsSpan((int)(valNum % 4));
        int len = _smallestKey + (int)FastRange((valNum >> 5) * 1234567891u, 5);
        BinaryPrimitives.WriteUInt32LittleEndian(data, valNum);
        BinaryPrimitives.WriteUInt32LittleEndian(data.Slice(4), filterNum + valNum);
        BinaryPrimitives.WriteUInt32LittleEndian(data.Slice(8), 0);
        return data.Slice(0, len);
    }

    private static uint FastRange(uint x, uint n) => (uint)(((ulong)x * n) >> 32);

    private uint NextRandom()
    {
        // xorshift64*: the upper 32 bits.
        ulong x = _rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        _rng = x;
        return (uint)((x * 0x2545F4914F6CDD1DUL) >> 32);
    }

    private sealed class FilterInfo(uint id, uint keys, FastLocalBloomNativeReader? reader)
    {
        public uint Id { get; } = id;
        public uint Keys { get; } = keys;
        public FastLocalBloomNativeReader? Reader { get; } = reader;
        public long OutsideQueries { get; set; }
        public long FalsePositives { get; set; }
    }
}
