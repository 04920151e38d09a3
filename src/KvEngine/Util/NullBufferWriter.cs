using System.Buffers;

namespace KvEngine.Util;

/// <summary>
/// A buffer writer that discards what is written (lookups whose caller wants only whether a value
/// exists). The scratch space handed out is per thread, grown on demand and kept, so writes allocate
/// nothing in steady state. Thread-safe.
/// </summary>
internal sealed class NullBufferWriter : IBufferWriter<byte>
{
    [ThreadStatic]
    private static byte[]? t_scratch;

    public static readonly NullBufferWriter Instance = new();

    private NullBufferWriter()
    {
    }

    public void Advance(int count) => ArgumentOutOfRangeException.ThrowIfNegative(count);

    public Memory<byte> GetMemory(int sizeHint = 0) => Scratch(sizeHint);

    public Span<byte> GetSpan(int sizeHint = 0) => Scratch(sizeHint);

    private static byte[] Scratch(int sizeHint)
    {
        byte[]? s = t_scratch;
        if (s == null || s.Length < Math.Max(sizeHint, 1))
        {
            s = new byte[Math.Max(256, (int)Math.Min(Array.MaxLength, Math.Max(sizeHint, 1) * 2L))];
            t_scratch = s;
        }
        return s;
    }
}
