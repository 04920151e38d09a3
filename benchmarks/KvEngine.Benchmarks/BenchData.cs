namespace KvEngine.Benchmarks;

/// <summary>
/// Deterministic benchmark inputs: random keys packed end to end in one array (no per-key object,
/// so that reading a key in a benchmark allocates nothing) and random values. Seeds make every run
/// see the same data. Stateless and thread-safe.
/// </summary>
internal static class BenchData
{
    /// <summary>Key length of every benchmark (db_bench's default).</summary>
    public const int KeySize = 16;

    /// <summary>Value length of every benchmark (db_bench's default).</summary>
    public const int ValueSize = 100;

    /// <summary><paramref name="count"/> random keys of <paramref name="keySize"/> bytes, packed.</summary>
    public static byte[] RandomKeys(int count, int seed, int keySize = KeySize) => RandomBytes(count * keySize, seed);

    /// <summary><paramref name="length"/> random bytes.</summary>
    public static byte[] RandomBytes(int length, int seed)
    {
        var bytes = new byte[length];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }

    /// <summary>Key <paramref name="index"/> of a packed key array.</summary>
    public static ReadOnlySpan<byte> Key(byte[] keys, int index, int keySize = KeySize) => keys.AsSpan(index * keySize, keySize);

    /// <summary>Random keys as separate arrays, sorted bytewise (for building sorted structures in setup).</summary>
    public static byte[][] SortedRandomKeys(int count, int seed, int keySize = KeySize)
    {
        byte[] packed = RandomKeys(count, seed, keySize);
        var keys = new byte[count][];
        for (int i = 0; i < count; i++)
        {
            keys[i] = Key(packed, i, keySize).ToArray();
        }
        Array.Sort(keys, static (a, b) => a.AsSpan().SequenceCompareTo(b));
        return keys;
    }
}
