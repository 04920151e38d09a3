namespace KvEngine.Tests.Compression;

/// <summary>Inputs of the shapes compressors meet, for the codec tests: reproducible from a seed.</summary>
internal static class CodecTestData
{
    /// <summary>Shapes <see cref="Data"/> knows.</summary>
    public const int Shapes = 6;

    /// <summary>
    /// <paramref name="length"/> bytes of <paramref name="shape"/>: 0 random, 1 db_bench's
    /// half-compressible values, 2 one byte repeated, 3 a random 70,000-byte chunk repeated (matches
    /// past LZ4's 64 KiB window), 4 text-like with short repeats, 5 two alternating periods (repeats
    /// of the second-last offset).
    /// </summary>
    public static byte[] Data(int length, int shape, int seed)
    {
        var rnd = new Random(seed);
        var data = new byte[length];
        switch (shape)
        {
            case 0:
                rnd.NextBytes(data);
                break;
            case 1:
                for (int i = 0; i < length; i++)
                {
                    data[i] = i % 100 < 50 ? (byte)(' ' + rnd.Next(95)) : data[i - 50];
                }
                break;
            case 2:
                Array.Fill(data, (byte)'z');
                break;
            case 3:
                var chunk = new byte[70_000];
                rnd.NextBytes(chunk);
                for (int i = 0; i < length; i++)
                {
                    data[i] = chunk[i % chunk.Length];
                }
                break;
            case 4:
                for (int i = 0; i < length; i++)
                {
                    data[i] = (byte)"the quick brown fox jumps over the lazy dog "[(i * 7 + rnd.Next(3)) % 44];
                }
                break;
            default:
                for (int i = 0; i < length; i++)
                {
                    data[i] = i < 64 ? (byte)rnd.Next(256) : (i / 16 % 2 == 0 ? data[i - 24] : data[i - 40]);
                }
                break;
        }
        return data;
    }

    /// <summary>
    /// Random structure for the compressors' search: runs of random bytes, of one byte, and copies
    /// of earlier stretches at random distances (short, near and far, often the same distance
    /// again), so matches of every length meet repeat offsets and the block's ends.
    /// </summary>
    public static byte[] Segments(Random rnd, int length)
    {
        var data = new byte[length];
        int at = 0;
        int lastDistance = 1;
        while (at < length)
        {
            int run = Math.Min(length - at, rnd.Next(1, rnd.Next(2) == 0 ? 16 : 300));
            switch (rnd.Next(4))
            {
                case 0:
                    rnd.NextBytes(data.AsSpan(at, run));
                    break;
                case 1:
                    data.AsSpan(at, run).Fill((byte)rnd.Next(256));
                    break;
                default:
                    if (at == 0)
                    {
                        rnd.NextBytes(data.AsSpan(at, run));
                        break;
                    }
                    int distance = rnd.Next(3) == 0 ? lastDistance : rnd.Next(1, Math.Min(at, rnd.Next(2) == 0 ? 64 : 70_000) + 1);
                    distance = Math.Min(distance, at);
                    lastDistance = distance;
                    for (int i = 0; i < run; i++)
                    {
                        data[at + i] = data[at + i - distance];
                    }
                    break;
            }
            at += run;
        }
        return data;
    }
}
