namespace KvEngine.DbBench;

/// <summary>Per-thread benchmark state: its RNG, key buffer, value generator and counters.</summary>
internal sealed class ThreadState
{
    public ThreadState(int id, BenchFlags flags)
    {
        Id = id;
        Random = new Random((int)(flags.Seed == 0 ? 1000 + id : flags.Seed + id));
        Key = new byte[flags.KeySize];
        Values = new ValueGenerator(flags.CompressionRatio, flags.ValueSize);
        Histogram = flags.Histogram ? new Histogram() : null;
    }

    public int Id { get; }

    public Random Random { get; }

    public byte[] Key { get; }

    public ValueGenerator Values { get; }

    public Histogram? Histogram { get; }

    public long Done { get; set; }

    public long Found { get; set; }

    public long Bytes { get; set; }

    public double Seconds { get; set; }

    public string? Message { get; set; }
}
