namespace KvEngine.DbBench;

/// <summary>
/// db_bench's RandomGenerator: a 1 MiB buffer of 100-byte pieces, each a random printable string
/// of 100 x compression_ratio characters repeated to 100 bytes (test::CompressibleString), so a
/// value compresses to about compression_ratio of its size; values are consecutive slices of it.
/// One per thread.
/// </summary>
internal sealed class ValueGenerator
{
    private readonly byte[] _data;
    private int _pos;

    public ValueGenerator(double compressionRatio, int valueSize)
    {
        var rnd = new Random(301);
        int size = Math.Max(1 << 20, valueSize);
        _data = new byte[size + 100];
        int filled = 0;
        int raw = Math.Max(1, (int)(100 * compressionRatio));
        Span<byte> piece = stackalloc byte[raw];
        while (filled < size)
        {
            for (int i = 0; i < raw; i++)
            {
                piece[i] = (byte)(' ' + rnd.Next(95));
            }
            for (int i = 0; i < 100; i++)
            {
                _data[filled + i] = piece[i % raw];
            }
            filled += 100;
        }
    }

    public ReadOnlySpan<byte> Next(int length)
    {
        if (_pos + length > _data.Length - 100)
        {
            _pos = 0;
        }
        _pos += length;
        return _data.AsSpan(_pos - length, length);
    }
}
