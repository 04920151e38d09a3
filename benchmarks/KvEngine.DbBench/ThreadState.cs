namespace KvEngine.DbBench;

/// <summary>Per-thread benchmark state: its RNG, key buffer, value generator and counters.</summary>
internal sealed class ThreadState
{
    /// <param name="id">The thread's index within its benchmark.</param>
    /// <param name="seedOffset">
    /// db_bench's total_thread_count_: grows across benchmarks, so each benchmark (and thread)
    /// draws different keys (a readrandom after a fillrandom finds about 63% of its keys).
    /// </param>
    public ThreadState(int id, long seedOffset, BenchFlags flags)
    {
        Id = id;
        Random = new Random(unchecked((int)((flags.Seed == 0 ? flags.SeedBase : flags.Seed) + seedOffset)));
        Key = new byte[flags.KeySize];
        Values = new ValueGenerator(flags.CompressionRatio, flags.ValueSize);
        Histogram = flags.Histogram ? new Histogram() : null;
    }

    private long _done;

    public int Id { get; }

    public Random Random { get; }

    public byte[] Key { get; }

    public ValueGenerator Values { get; }

    public Histogram? Histogram { get; }

    /// <summary>Operations done so far; written by the worker, read by the progress reporter.</summary>
    public long Done
    {
        get => Volatile.Read(ref _done);
        set => Volatile.Write(ref _done, value);
    }

    public long Found { get; set; }

    public long Bytes { get; set; }

    public double Seconds { get; set; }

    /// <summary>Managed bytes this thread allocated while running the benchmark.</summary>
    public long AllocatedBytes { get; set; }

    public string? Message { get; set; }
}
