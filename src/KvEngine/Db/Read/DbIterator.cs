using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Merge;
using KvEngine.Util;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Db.Read;

/// <summary>
/// User-facing iteration over an internal iterator (usually a <see cref="MergingIterator"/> of
/// memtables and tables) at a read sequence number, after LevelDB's db_iter.cc and RocksDB's
/// DBIter: entries newer than the read sequence are invisible, only the newest visible entry of a
/// user key counts, and a key whose newest visible entry is a Deletion or SingleDeletion (or a Value
/// covered by a range tombstone, see <see cref="IRangeDelAggregator"/>) is hidden. A Merge as the
/// newest visible entry is combined with the key's older operands and base value by the merge
/// operator (RocksDB's MergeValuesNewToOld; see DbIterator.Merge.cs); the merged value lives in this
/// iterator's buffers, in either direction.
/// Optional bounds: lower (inclusive) and upper (exclusive) user keys end iteration and clamp seeks.
/// <para>
/// Direction state. Forward: when Valid, the internal iterator is positioned at the current entry
/// (the newest visible Value of <see cref="Key"/>), which Key and Value read directly, except after a
/// merge (<c>_forwardSaved</c>): the internal iterator is then past the entries the merge consumed and
/// the key and merged value live in this iterator's buffers. Reverse: the
/// internal iterator has moved on to the last entry before the current user key's entries (or is
/// not Valid), so the current key and value live in this iterator's own buffers. Switching
/// direction repositions the internal iterator on the other side of the current user key.
/// </para>
/// <para>
/// Skipping. Hidden entries (older versions, deleted keys, versions newer than the snapshot) are
/// stepped over with Next/Prev, but never more than <c>maxSequentialSkip</c> in a row for one user
/// key (RocksDB's max_sequential_skip_in_iterations): forward, it then seeks past the key's remaining
/// versions ((key, 0, Deletion)) or straight to its newest visible version ((key, read seq, seek
/// type)); in reverse it seeks to the newest visible version, reads it, and seeks back before the key.
/// So a key with many overwritten or not-yet-visible versions costs O(maxSkip + log n), not O(versions).
/// A long run of distinct point-deleted keys is still stepped over entry by entry, as in RocksDB;
/// a run covered by a range tombstone is not: the children of the merging iterator older than the
/// tombstone's source are moved past the tombstone fragment with one seek each (see
/// <see cref="IRangeDelAggregator.TryGetLastCover"/>).
/// </para>
/// <para>
/// Allocation: the saved key/value and seek-key buffers are pooled and reused; moves allocate
/// nothing once they have grown. Any exception from the internal iterator (e.g.
/// <see cref="KvCorruptionException"/>) propagates and leaves this iterator not Valid; a later seek
/// may be tried. Owns the internal iterator (disposes it), not the aggregator. Not thread-safe.
/// </para>
/// </summary>
internal sealed partial class DbIterator : IDisposable
{
    /// <summary>RocksDB's default max_sequential_skip_in_iterations.</summary>
    public const int DefaultMaxSequentialSkip = 8;

    private readonly InternalIterator _iter;
    private ulong _sequence;
    private byte[]? _lower;
    private byte[]? _upper;
    private readonly IRangeDelAggregator? _rangeDel;
    private readonly MergingIterator? _merging; // for skipping children past a range tombstone
    private readonly int _maxSkip;
    private readonly ByteBuffer _savedKey = new(64);
    private readonly ByteBuffer _savedValue = new(256);
    private readonly ByteBuffer _seekKey = new(64);
    private readonly ByteBuffer _startPrefix = new(16);
    private bool _prefixBound; // the iteration is confined to _startPrefix (PrefixSameAsStart after a positioning)
    private bool _valid;
    private bool _coveredByRange; // the last IsLiveValue said false because of a range tombstone
    private bool _reverse;
    private bool _forwardSaved; // forward, but Key/Value are the saved (merged) ones
    private bool _disposed;

    /// <param name="internalIterator">The source; this iterator takes ownership.</param>
    /// <param name="sequence">Read sequence: entries with a larger sequence are invisible.</param>
    /// <param name="lowerBound">Inclusive lower bound user key, or null (copied).</param>
    /// <param name="upperBound">Exclusive upper bound user key, or null (copied).</param>
    /// <param name="rangeDelAggregator">Range tombstones at this snapshot, or null for none.</param>
    /// <param name="maxSequentialSkip">Hidden entries of one user key stepped over before reseeking (0 or more).</param>
    /// <param name="mergeOperator">Combines merge operands; null makes a key with operands fail with <see cref="KvException"/>.</param>
    public DbIterator(
        InternalIterator internalIterator,
        ulong sequence,
        byte[]? lowerBound = null,
        byte[]? upperBound = null,
        IRangeDelAggregator? rangeDelAggregator = null,
        int maxSequentialSkip = DefaultMaxSequentialSkip,
        KvMergeOperator? mergeOperator = null)
    {
        _mergeOperator = mergeOperator;
        ArgumentNullException.ThrowIfNull(internalIterator);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(sequence, InternalKeys.MaxSequenceNumber);
        ArgumentOutOfRangeException.ThrowIfNegative(maxSequentialSkip);
        _iter = internalIterator;
        _sequence = sequence;
        _lower = lowerBound is null ? null : (byte[])lowerBound.Clone();
        _upper = upperBound is null ? null : (byte[])upperBound.Clone();
        _rangeDel = rangeDelAggregator;
        _merging = rangeDelAggregator is null ? null : internalIterator as MergingIterator;
        _maxSkip = maxSequentialSkip;
    }

    public bool Valid => _valid;

    /// <summary>The inclusive lower bound (this iterator's copy), or null.</summary>
    public byte[]? LowerBound => _lower;

    /// <summary>The exclusive upper bound (this iterator's copy), or null.</summary>
    public byte[]? UpperBound => _upper;

    /// <summary>
    /// RocksDB's prefix_same_as_start: with an extractor, Seek/SeekForPrev to an in-domain target (or
    /// SeekToFirst/SeekToLast, from the key they find) confine the iteration to that prefix: the
    /// iterator becomes invalid at the first key with another prefix (or out of the domain). Null: off.
    /// </summary>
    public KvPrefixExtractor? PrefixSameAsStart { get; set; }

    /// <summary>
    /// The internal iterator's tables filter seeks by prefix (an extractor without TotalOrderSeek),
    /// so it is no total order across prefixes: a child repositioned at a key of another prefix may
    /// have yielded nothing. Turning from reverse to forward then seeks to the current key instead
    /// of stepping on from the entry before it, which may lie in the previous prefix (RocksDB's
    /// ReverseToForward). Fixed for the iterator's life (a spare is reused only in the same mode).
    /// </summary>
    public bool PrefixSeek { get; init; }

    /// <summary>
    /// Reads at <paramref name="sequence"/> within new bounds from now on (the internal iterator and
    /// aggregator stay: the caller checked they still describe the data); not Valid until positioned.
    /// Bounds equal to the current ones keep their copies, so a reset with unchanged options allocates nothing.
    /// </summary>
    public void Reset(ulong sequence, byte[]? lowerBound, byte[]? upperBound)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(sequence, InternalKeys.MaxSequenceNumber);
        _sequence = sequence;
        _lower = SameOrCopy(_lower, lowerBound);
        _upper = SameOrCopy(_upper, upperBound);
        _valid = false;
        _reverse = false;
        _forwardSaved = false;
        _coveredByRange = false;
        _savedKey.Clear();
        _savedValue.Clear();
    }

    /// <summary>Releases the blocks the internal iterator pins (see <see cref="InternalIterator.Unpin"/>); not Valid until positioned.</summary>
    public void Unpin()
    {
        _valid = false;
        _reverse = false;
        _forwardSaved = false;
        _iter.Unpin();
    }

    private static byte[]? SameOrCopy(byte[]? current, byte[]? wanted) =>
        wanted is null ? null : current is not null && current.AsSpan().SequenceEqual(wanted) ? current : (byte[])wanted.Clone();

    /// <summary>The current user key; good until the next move.</summary>
    public ReadOnlySpan<byte> Key
    {
        get
        {
            ThrowIfNotValid();
            return _reverse || _forwardSaved ? _savedKey.WrittenSpan : InternalKeys.UserKey(_iter.Key);
        }
    }

    /// <summary>The current value; good until the next move.</summary>
    public ReadOnlySpan<byte> Value
    {
        get
        {
            ThrowIfNotValid();
            return _reverse || _forwardSaved ? _savedValue.WrittenSpan : _iter.Value;
        }
    }

    public void SeekToFirst()
    {
        Begin();
        try
        {
            if (_lower is not null)
            {
                _iter.Seek(ScratchKey(_lower, _sequence, ValueType.ValueTypeForSeek));
            }
            else
            {
                _iter.SeekToFirst();
            }
            FindNextUserEntry(skipping: false);
            BindPrefixToCurrent();
        }
        catch
        {
            _valid = false;
            throw;
        }
    }

    public void SeekToLast()
    {
        Begin();
        try
        {
            SeekInternalToLast();
            PrevInternal();
            BindPrefixToCurrent();
        }
        catch
        {
            _valid = false;
            throw;
        }
    }

    /// <summary>Positions at the first visible key &gt;= <paramref name="target"/> (clamped to the bounds).</summary>
    public void Seek(ReadOnlySpan<byte> target)
    {
        Begin();
        try
        {
            if (_lower is not null && target.SequenceCompareTo(_lower) < 0)
            {
                target = _lower;
            }
            if (_upper is not null && target.SequenceCompareTo(_upper) >= 0)
            {
                return;
            }
            BindPrefix(target);
            _iter.Seek(ScratchKey(target, _sequence, ValueType.ValueTypeForSeek));
            FindNextUserEntry(skipping: false);
        }
        catch
        {
            _valid = false;
            throw;
        }
    }

    /// <summary>Positions at the last visible key &lt;= <paramref name="target"/> (clamped to the bounds).</summary>
    public void SeekForPrev(ReadOnlySpan<byte> target)
    {
        Begin();
        try
        {
            if (_lower is not null && target.SequenceCompareTo(_lower) < 0)
            {
                return;
            }
            BindPrefix(target);
            if (_upper is not null && target.SequenceCompareTo(_upper) >= 0)
            {
                SeekInternalToLast();
            }
            else
            {
                // (target, 0, Deletion) is the last internal key of target: land on its oldest entry.
                _iter.SeekForPrev(ScratchKey(target, 0, ValueType.Deletion));
            }
            PrevInternal();
        }
        catch
        {
            _valid = false;
            throw;
        }
    }

    public void Next()
    {
        ThrowIfNotValid();
        try
        {
            if (_reverse)
            {
                // The internal iterator is just before the current key's entries: step into them
                // (in prefix seek mode, seek them: the entry before may be of another prefix);
                // _savedKey already holds the key to skip.
                _reverse = false;
                if (_iter.Valid && !PrefixSeek)
                {
                    _iter.Next();
                }
                else
                {
                    _iter.Seek(ScratchKey(_savedKey.WrittenSpan, InternalKeys.MaxSequenceNumber, ValueType.ValueTypeForSeek));
                }
            }
            else if (_forwardSaved)
            {
                // A merge consumed the key's entries: the internal iterator is already past them
                // (any it left are hidden by skipping), and _savedKey holds the key.
                _forwardSaved = false;
            }
            else
            {
                SaveKey(InternalKeys.UserKey(_iter.Key));
                _iter.Next();
            }
            FindNextUserEntry(skipping: true);
        }
        catch
        {
            _valid = false;
            throw;
        }
    }

    public void Prev()
    {
        ThrowIfNotValid();
        try
        {
            if (_forwardSaved)
            {
                // After a merge the internal iterator is past the key: go back before all of it.
                _forwardSaved = false;
                _iter.SeekForPrev(ScratchKey(_savedKey.WrittenSpan, InternalKeys.MaxSequenceNumber, ValueType.ValueTypeForSeek));
                _reverse = true;
            }
            else if (!_reverse)
            {
                // Move the internal iterator before every entry of the current key (the ones before
                // the current entry are versions newer than the snapshot).
                SaveKey(InternalKeys.UserKey(_iter.Key));
                int steps = 0;
                while (true)
                {
                    _iter.Prev();
                    if (!_iter.Valid || UserKeyOf(_iter.Key).SequenceCompareTo(_savedKey.WrittenSpan) < 0)
                    {
                        break;
                    }
                    if (++steps > _maxSkip)
                    {
                        _iter.SeekForPrev(ScratchKey(_savedKey.WrittenSpan, InternalKeys.MaxSequenceNumber, ValueType.ValueTypeForSeek));
                        break;
                    }
                }
                _reverse = true;
            }
            PrevInternal();
        }
        catch
        {
            _valid = false;
            throw;
        }
    }

    public void Dispose()
    {
        if (_disposed)
        {
            return;
        }
        _disposed = true;
        _valid = false;
        _iter.Dispose();
        _mergeResult?.Dispose();
        _savedKey.Dispose();
        _savedValue.Dispose();
        _seekKey.Dispose();
        _startPrefix.Dispose();
    }

    private void Begin()
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        _prefixBound = false;
        _valid = false;
        _reverse = false;
        _forwardSaved = false;
        _savedKey.Clear();
        _savedValue.Clear();
    }

    // PrefixSameAsStart: confine the coming iteration to the target's prefix (a target out of the domain confines nothing).
    private void BindPrefix(ReadOnlySpan<byte> target)
    {
        KvPrefixExtractor? extractor = PrefixSameAsStart;
        if (extractor != null && extractor.InDomain(target))
        {
            _startPrefix.Clear();
            _startPrefix.Append(extractor.Transform(target));
            _prefixBound = true;
        }
    }

    // After SeekToFirst/SeekToLast, RocksDB takes the prefix of the key found.
    private void BindPrefixToCurrent()
    {
        if (_valid && PrefixSameAsStart != null)
        {
            BindPrefix(Key);
        }
    }

    private bool InStartPrefix(ReadOnlySpan<byte> userKey)
    {
        KvPrefixExtractor extractor = PrefixSameAsStart!;
        return extractor.InDomain(userKey) && extractor.Transform(userKey).SequenceEqual(_startPrefix.WrittenSpan);
    }

    // Positions the internal iterator at the last entry below the upper bound (or the very last).
    private void SeekInternalToLast()
    {
        if (_upper is not null)
        {
            // (upper, max seq, seek type) is the first internal key of upper: land before all of it.
            _iter.SeekForPrev(ScratchKey(_upper, InternalKeys.MaxSequenceNumber, ValueType.ValueTypeForSeek));
        }
        else
        {
            _iter.SeekToLast();
        }
    }

    // Forward scan from the internal position for the next entry to expose. When skipping, every
    // entry whose user key is <= _savedKey is hidden.
    private void FindNextUserEntry(bool skipping)
    {
        int numSkipped = 0;
        bool reseekDone = false;
        while (_iter.Valid)
        {
            ReadOnlySpan<byte> ikey = _iter.Key;
            ReadOnlySpan<byte> userKey = UserKeyOf(ikey);
            if (_upper is not null && userKey.SequenceCompareTo(_upper) >= 0)
            {
                break;
            }
            if (_prefixBound && !InStartPrefix(userKey))
            {
                break;
            }
            ulong trailer = InternalKeys.Trailer(ikey);
            if ((trailer >> 8) <= _sequence)
            {
                if (skipping && userKey.SequenceCompareTo(_savedKey.WrittenSpan) <= 0)
                {
                    numSkipped++;
                }
                else
                {
                    numSkipped = 0;
                    reseekDone = false;
                    if (IsLiveValue((ValueType)(byte)trailer, ikey))
                    {
                        if ((ValueType)(byte)trailer == ValueType.Merge)
                        {
                            SaveKey(userKey);
                            MergeForward();
                            _forwardSaved = true;
                        }
                        _valid = true;
                        return;
                    }
                    SaveKey(userKey);
                    skipping = true;
                    if (_coveredByRange && SkipCoveredChildren(forward: true))
                    {
                        continue; // older children moved past the tombstone; newer ones go on as usual
                    }
                }
            }
            else
            {
                // A version newer than the snapshot.
                int cmp = userKey.SequenceCompareTo(_savedKey.WrittenSpan);
                if (cmp == 0 || (skipping && cmp < 0))
                {
                    numSkipped++;
                }
                else
                {
                    SaveKey(userKey);
                    skipping = false;
                    numSkipped = 0;
                    reseekDone = false;
                }
            }

            if (numSkipped > _maxSkip && !reseekDone)
            {
                numSkipped = 0;
                reseekDone = true;
                _iter.Seek(skipping
                    ? ScratchKey(_savedKey.WrittenSpan, 0, ValueType.Deletion)
                    : ScratchKey(_savedKey.WrittenSpan, _sequence, ValueType.ValueTypeForSeek));
            }
            else
            {
                _iter.Next();
            }
        }
        _valid = false;
    }

    // Reverse scan: the internal iterator is at the last (oldest) entry of some user key. Finds the
    // closest earlier user key with a live newest visible entry, leaving the internal iterator
    // before that key's entries.
    private void PrevInternal()
    {
        _reverse = true;
        while (_iter.Valid)
        {
            ReadOnlySpan<byte> userKey = UserKeyOf(_iter.Key);
            if (_lower is not null && userKey.SequenceCompareTo(_lower) < 0)
            {
                break;
            }
            if (_prefixBound && !InStartPrefix(userKey))
            {
                break;
            }
            SaveKey(userKey);
            _coveredByRange = false;
            if (FindValueForCurrentKey())
            {
                _valid = true;
                return;
            }
            if (_coveredByRange)
            {
                SkipCoveredChildren(forward: false);
            }
        }
        _valid = false;
        _savedKey.Clear();
        _savedValue.Clear();
    }

    // Walks back over the entries of _savedKey (oldest to newest); true when the newest visible one
    // is a live Value, then saved in _savedValue.
    private bool FindValueForCurrentKey()
    {
        bool anyVisible = false;
        ulong newestTrailer = 0;
        int count = 0;
        bool baseIsValue = false; // the newest non-merge visible entry so far is a Value (in _savedValue)
        ulong baseSequence = 0;
        MergeContext? operands = _operands; // the visible operands newer than it, oldest first
        operands?.Clear();
        do
        {
            ReadOnlySpan<byte> ikey = _iter.Key;
            if (!UserKeyOf(ikey).SequenceEqual(_savedKey.WrittenSpan))
            {
                break;
            }
            if (count > _maxSkip)
            {
                return FindValueForCurrentKeyUsingSeek();
            }
            ulong trailer = InternalKeys.Trailer(ikey);
            if ((trailer >> 8) <= _sequence)
            {
                anyVisible = true;
                newestTrailer = trailer;
                var type = (ValueType)(byte)trailer;
                if (type == ValueType.Value)
                {
                    _savedValue.Clear();
                    _savedValue.Append(_iter.Value);
                    baseIsValue = true;
                    baseSequence = trailer >> 8;
                    operands?.Clear();
                }
                else if (type == ValueType.Merge)
                {
                    operands ??= _operands = new MergeContext();
                    PushOperandSequence(operands.Count, trailer >> 8);
                    operands.PushNewer(_iter.Value);
                }
                else
                {
                    baseIsValue = false;
                    operands?.Clear();
                }
            }
            count++;
            _iter.Prev();
        }
        while (_iter.Valid);
        // Judge only the newest visible entry: older Merge or corrupt-typed versions are hidden, as forward.
        if (!anyVisible)
        {
            return false;
        }
        var newestType = (ValueType)(byte)newestTrailer;
        if (!IsLiveValue(newestType, ScratchKey(_savedKey.WrittenSpan, newestTrailer >> 8, newestType)))
        {
            return false;
        }
        if (newestType == ValueType.Merge)
        {
            MergeBackward(operands!, baseIsValue, baseSequence);
        }
        return true;
    }

    private bool FindValueForCurrentKeyUsingSeek()
    {
        bool live = false;
        _iter.Seek(ScratchKey(_savedKey.WrittenSpan, _sequence, ValueType.ValueTypeForSeek));
        if (_iter.Valid)
        {
            ReadOnlySpan<byte> ikey = _iter.Key;
            // Sorting after the seek key, an entry of the same user key is its newest visible one.
            if (UserKeyOf(ikey).SequenceEqual(_savedKey.WrittenSpan) && IsLiveValue(InternalKeys.Type(ikey), ikey))
            {
                live = true;
                if (InternalKeys.Type(ikey) == ValueType.Merge)
                {
                    MergeForward();
                }
                else
                {
                    _savedValue.Clear();
                    _savedValue.Append(_iter.Value);
                }
            }
        }
        _iter.SeekForPrev(ScratchKey(_savedKey.WrittenSpan, InternalKeys.MaxSequenceNumber, ValueType.ValueTypeForSeek));
        return live;
    }

    private static ReadOnlySpan<byte> UserKeyOf(ReadOnlySpan<byte> ikey)
    {
        if (ikey.Length < InternalKeys.TrailerSize)
        {
            throw new KvCorruptionException($"Internal key of {ikey.Length} bytes is shorter than its 8-byte trailer.");
        }
        return ikey[..^InternalKeys.TrailerSize];
    }

    private void SaveKey(ReadOnlySpan<byte> userKey)
    {
        _savedKey.Clear();
        _savedKey.Append(userKey);
    }

    // Builds an internal key (for a seek or the aggregator) in the scratch buffer.
    private ReadOnlySpan<byte> ScratchKey(ReadOnlySpan<byte> userKey, ulong sequence, ValueType type)
    {
        _seekKey.Clear();
        _seekKey.Append(userKey);
        _seekKey.AppendFixed64(InternalKeys.PackTrailer(sequence, type));
        return _seekKey.WrittenSpan;
    }

    // Inlined on every Key/Value/Next (a scan calls them per entry); the throwing part is cold.
    private void ThrowIfNotValid()
    {
        if (_disposed || !_valid)
        {
            ThrowNotValid();
        }
    }

    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private void ThrowNotValid()
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        throw new InvalidOperationException("The iterator is not positioned on an entry.");
    }
}
