using System.Buffers;

namespace KvEngine.Extensions.Caching.Tests;

/// <summary>Builds multi-segment <see cref="ReadOnlySequence{T}"/>s, as a pipe hands them out. Not thread-safe.</summary>
internal sealed class TestSegment : ReadOnlySequenceSegment<byte>
{
    private TestSegment(ReadOnlyMemory<byte> memory, long runningIndex)
    {
        Memory = memory;
        RunningIndex = runningIndex;
    }

    /// <summary>A sequence of one segment per part (empty parts included).</summary>
    public static ReadOnlySequence<byte> Sequence(params byte[][] parts)
    {
        if (parts.Length == 1)
        {
            return new ReadOnlySequence<byte>(parts[0]);
        }
        var first = new TestSegment(parts[0], 0);
        TestSegment last = first;
        for (int i = 1; i < parts.Length; i++)
        {
            var next = new TestSegment(parts[i], last.RunningIndex + last.Memory.Length);
            last.Next = next;
            last = next;
        }
        return new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
    }
}
