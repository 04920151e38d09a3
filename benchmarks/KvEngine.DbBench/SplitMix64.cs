namespace KvEngine.DbBench;

/// <summary>SplitMix64: a fast seeded 64-bit generator (System.Random with a seed uses a slow legacy algorithm). A mutable struct: keep it in a local or field, never copy. Not thread-safe.</summary>
internal struct SplitMix64
{
    private ulong _state;

    public SplitMix64(ulong seed) => _state = seed;

    public ulong Next()
    {
        ulong z = _state += 0x9E3779B97F4A7C15UL;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
        return z ^ (z >> 31);
    }

    /// <summary>Uniform in [0, <paramref name="n"/>) by multiply-shift (FastRange64).</summary>
    public ulong Below(ulong n) => (ulong)(((UInt128)Next() * n) >> 64);
}
