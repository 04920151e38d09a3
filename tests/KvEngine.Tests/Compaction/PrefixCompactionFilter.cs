using System.Buffers;
using System.Collections.Concurrent;
using System.Text;

namespace KvEngine.Tests.Compaction;

/// <summary>
/// A deterministic test filter deciding by the value's first byte: 'x' removes, 'c' changes the value
/// to the same bytes with a 'C' first (which it then keeps), anything else is kept. Records every key
/// it was called for. <see cref="Enabled"/> false keeps everything without recording;
/// <see cref="Throw"/> makes it throw. Thread-safe (compactions may call it concurrently).
/// </summary>
internal sealed class PrefixCompactionFilter : KvCompactionFilter
{
    private volatile bool _enabled = true;
    private volatile bool _throw;

    public override string Name => "PrefixCompactionFilter";

    public bool Enabled { get => _enabled; set => _enabled = value; }

    public bool Throw { get => _throw; set => _throw = value; }

    public ConcurrentQueue<string> Seen { get; } = new();

    /// <summary>The value this filter leaves for <paramref name="value"/>; null when it removes it.</summary>
    public static string? Apply(string value) => value.Length == 0 ? value : value[0] switch
    {
        'x' => null,
        'c' => "C" + value[1..],
        _ => value,
    };

    public override KvCompactionFilterDecision FilterValue(int level, ReadOnlySpan<byte> key, ReadOnlySpan<byte> existingValue,
        IBufferWriter<byte> newValue)
    {
        if (!_enabled)
        {
            return KvCompactionFilterDecision.Keep;
        }
        Seen.Enqueue(Encoding.UTF8.GetString(key));
        if (_throw)
        {
            throw new InvalidOperationException("filter failure for the test");
        }
        if (existingValue.IsEmpty)
        {
            return KvCompactionFilterDecision.Keep;
        }
        switch (existingValue[0])
        {
            case (byte)'x':
                return KvCompactionFilterDecision.Remove;
            case (byte)'c':
                Span<byte> dest = newValue.GetSpan(existingValue.Length);
                existingValue.CopyTo(dest);
                dest[0] = (byte)'C';
                newValue.Advance(existingValue.Length);
                return KvCompactionFilterDecision.ChangeValue;
            default:
                return KvCompactionFilterDecision.Keep;
        }
    }
}
