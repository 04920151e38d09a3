using System.Buffers;

namespace KvEngine.DbBench;

/// <summary>One of readrandom's -inflight workers: its key buffer, value buffer, random keys and counters. Used by one request at a time.</summary>
internal sealed class InFlightWorker(int seed, int keySize, int valueSize, bool histogram)
{
    public Random Random { get; } = new(seed);

    public byte[] Key { get; } = new byte[keySize];

    public ArrayBufferWriter<byte> Value { get; } = new(Math.Max(16, valueSize));

    public Histogram? Histogram { get; } = histogram ? new Histogram() : null;

    public long Done { get; set; }

    public long Found { get; set; }

    public long Bytes { get; set; }
}
