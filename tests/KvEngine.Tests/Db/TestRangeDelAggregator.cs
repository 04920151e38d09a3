using KvEngine.Db;
using KvEngine.Db.Read;
using KvEngine.Format;
using KvEngine.Iterators;

namespace KvEngine.Tests.Db;

/// <summary>
/// Test aggregator: a plain list of range tombstones [Start, End) at sequence Seq, read at
/// <c>readSequence</c>. An entry is deleted by a visible tombstone newer than it.
/// </summary>
internal sealed class TestRangeDelAggregator : IRangeDelAggregator
{
    private readonly List<(byte[] Start, byte[] End, ulong Seq)> _tombstones;
    private readonly ulong _readSequence;

    public TestRangeDelAggregator(IEnumerable<(byte[] Start, byte[] End, ulong Seq)> tombstones, ulong readSequence)
    {
        _tombstones = tombstones.ToList();
        _readSequence = readSequence;
    }

    public int Calls { get; private set; }

    public bool ShouldDelete(ReadOnlySpan<byte> internalKey)
    {
        Calls++;
        ReadOnlySpan<byte> userKey = InternalKeys.UserKey(internalKey);
        ulong seq = InternalKeys.Sequence(internalKey);
        foreach (var (start, end, tseq) in _tombstones)
        {
            if (tseq <= _readSequence && tseq > seq
                && userKey.SequenceCompareTo(start) >= 0 && userKey.SequenceCompareTo(end) < 0)
            {
                return true;
            }
        }
        return false;
    }
}
