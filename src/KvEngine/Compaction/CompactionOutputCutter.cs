using KvEngine.Format;
using KvEngine.Versions;

namespace KvEngine.Compaction;

/// <summary>
/// Decides where a compaction cuts its output files, aligning them to the file boundaries of the
/// grandparent level (RocksDB's CompactionOutputs::ShouldStopBefore, PR 10655), so that a later
/// compaction of an output file overlaps as few next-level bytes as possible.
/// <para>
/// Fed the user key of every output entry that starts a new user key (outputs are only cut between
/// user keys), it walks the sorted grandparent files, counting boundaries crossed (a file's start or
/// end) and the bytes of every grandparent file the current output has entered. It cuts before the
/// key when (with an open output):
/// </para>
/// <list type="bullet">
/// <item>the output reached its maximum size: 2 x target when dynamic sizing is on, the output is
/// not bottommost and grandparents exist; the target otherwise;</item>
/// <item>this key crossed a boundary and overlapped bytes + output size &gt; MaxCompactionBytes;</item>
/// <item>(dynamic) this key crossed &gt;= 2 boundaries landing in a gap, or &gt;= 3 landing inside a
/// file — so a whole grandparent file was skipped — and the overlap grew by &gt; target / 8;</item>
/// <item>(dynamic) this key crossed a boundary and the output is at least
/// target x (50 + min(5 x boundaries seen, 40)) / 100.</item>
/// </list>
/// After a cut the counters restart with the new output's first key. Not thread-safe.
/// </summary>
internal sealed class CompactionOutputCutter
{
    private readonly FileMetaData[] _grandparents;
    private readonly long _target;
    private readonly long _maxCompactionBytes;
    private readonly bool _dynamic;
    private int _index;
    private bool _inGap = true;
    private bool _seenKey;
    private long _overlappedBytes;
    private int _boundariesSeen;

    /// <param name="grandparents">Files of the level after the output level, sorted, non-overlapping.</param>
    /// <param name="targetFileSize">Target size of output files.</param>
    /// <param name="maxCompactionBytes">Limit of an output file's size plus its grandparent overlap.</param>
    /// <param name="dynamicFileSize">Align to grandparent boundaries (LevelCompactionDynamicFileSize).</param>
    /// <param name="bottommost">No data exists below the output level in this key range.</param>
    public CompactionOutputCutter(FileMetaData[] grandparents, long targetFileSize, long maxCompactionBytes, bool dynamicFileSize, bool bottommost)
    {
        _grandparents = grandparents;
        _target = targetFileSize;
        _maxCompactionBytes = maxCompactionBytes;
        _dynamic = dynamicFileSize;
        MaxOutputFileSize = bottommost || grandparents.Length == 0 || !dynamicFileSize ? targetFileSize : 2 * targetFileSize;
    }

    public long MaxOutputFileSize { get; }

    /// <summary>Number of cuts made per <see cref="OutputCutReason"/> (indexed by its value).</summary>
    public long[] Cuts { get; } = new long[4];

    /// <summary>Grandparent bytes the current output overlaps so far (for tests and statistics).</summary>
    public long OverlappedBytes => _overlappedBytes;

    /// <summary>
    /// Advances to <paramref name="userKey"/> (strictly greater than the previous call's) and
    /// returns true when the current output (of <paramref name="currentSize"/> bytes; none when
    /// <paramref name="hasOutput"/> is false) must be finished before this key.
    /// </summary>
    public bool ShouldStopBefore(ReadOnlySpan<byte> userKey, bool hasOutput, long currentSize)
    {
        long previousOverlap = _overlappedBytes;
        int crossed = UpdateBoundaries(userKey);
        if (!hasOutput)
        {
            return false;
        }
        OutputCutReason? reason = currentSize >= MaxOutputFileSize ? OutputCutReason.MaxFileSize : null;
        if (reason == null && crossed > 0)
        {
            if (_overlappedBytes + currentSize > _maxCompactionBytes)
            {
                reason = OutputCutReason.MaxCompactionBytes;
            }
            else if (_dynamic && crossed >= (_inGap ? 2 : 3) && _overlappedBytes - previousOverlap > _target / 8)
            {
                reason = OutputCutReason.SkippedGrandparent; // a whole grandparent file would be skipped over
            }
            else if (_dynamic && currentSize >= (_target + 99) / 100 * (50 + Math.Min(_boundariesSeen * 5, 40)))
            {
                reason = OutputCutReason.PreCut;
            }
        }
        bool cut = reason != null;
        if (reason is OutputCutReason r)
        {
            Cuts[(int)r]++;
            _boundariesSeen = 0;
            _overlappedBytes = CurrentKeyOverlap(userKey);
        }
        return cut;
    }

    /// <summary>Moves to the last grandparent file holding the key, or the gap before the next one.</summary>
    private int UpdateBoundaries(ReadOnlySpan<byte> userKey)
    {
        int crossed = 0;
        FileMetaData[] gp = _grandparents;
        if (gp.Length == 0)
        {
            return 0;
        }
        while (_index < gp.Length)
        {
            if (_inGap)
            {
                if (userKey.SequenceCompareTo(InternalKeys.UserKey(gp[_index].Smallest)) < 0)
                {
                    break;
                }
                if (_seenKey)
                {
                    crossed++;
                    _boundariesSeen++;
                    _overlappedBytes += (long)gp[_index].FileSize;
                }
                _inGap = false;
            }
            else
            {
                int c = userKey.SequenceCompareTo(InternalKeys.UserKey(gp[_index].Largest));
                if (c < 0 || (c == 0 && (_index == gp.Length - 1 ||
                    userKey.SequenceCompareTo(InternalKeys.UserKey(gp[_index + 1].Smallest)) < 0)))
                {
                    break;
                }
                if (_seenKey)
                {
                    crossed++;
                    _boundariesSeen++;
                }
                _inGap = true;
                _index++;
            }
        }
        if (!_seenKey && !_inGap)
        {
            _overlappedBytes = CurrentKeyOverlap(userKey);
        }
        _seenKey = true;
        return crossed;
    }

    /// <summary>Bytes of the grandparent files holding <paramref name="userKey"/> (0 in a gap).</summary>
    private long CurrentKeyOverlap(ReadOnlySpan<byte> userKey)
    {
        if (_inGap || _index >= _grandparents.Length)
        {
            return 0;
        }
        long bytes = (long)_grandparents[_index].FileSize;
        for (int i = _index - 1; i >= 0 && userKey.SequenceEqual(InternalKeys.UserKey(_grandparents[i].Largest)); i--)
        {
            bytes += (long)_grandparents[i].FileSize;
        }
        return bytes;
    }
}
