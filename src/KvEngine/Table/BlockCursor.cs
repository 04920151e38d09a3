using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using KvEngine.Format;
using KvEngine.Memory;
using KvEngine.Util;

namespace KvEngine.Table;

/// <summary>
/// A position inside one <see cref="Block"/> (grammar in <see cref="BlockBuilder"/>): binary search
/// over the restart points, then a linear scan. Every decode is bounds-checked against the entry
/// area; malformed bytes raise <see cref="KvCorruptionException"/>, never an index error, and every
/// step moves forward, so a corrupt block cannot make it loop.
/// <para>
/// A mutable struct: keep it in a field or local and call it in place (never copy a live cursor).
/// It rents a key buffer (<see cref="BlockKeyBuffers"/>); <see cref="Dispose"/> returns it. It does not own the block. Not thread-safe.
/// </para>
/// </summary>
internal struct BlockCursor : IDisposable
{
    private Block _block;
    private int _restarts;
    private int _numRestarts;
    private BlockKeyFormat _keyFormat;
    private IndexValueFormat _valueFormat;
    private bool _indexHasFirstKey;
    private byte[] _key;
    private int _keyLength;
    private int _current;
    private int _next;
    private int _restartIndex;
    private int _valueOffset;
    private int _valueLength;
    private BlockHandle _handle;

    public BlockCursor(Block block, BlockKeyFormat keyFormat, IndexValueFormat valueFormat = IndexValueFormat.NotIndex, bool indexHasFirstKey = false)
    {
        _block = block;
        _restarts = block.RestartsOffset;
        _numRestarts = block.RestartsOffset == 0 ? 0 : block.NumRestarts; // no entries: nothing to seek
        _keyFormat = keyFormat;
        _valueFormat = valueFormat;
        _indexHasFirstKey = indexHasFirstKey;
        _key = BlockKeyBuffers.Rent();
        _current = _restarts;
        _next = _restarts;
        _restartIndex = _numRestarts;
    }

    public readonly Block Block => _block;

    /// <summary>Moves the cursor to another block with the same formats, keeping its key buffer.</summary>
    public void Reset(Block block)
    {
        _block = block;
        _restarts = block.RestartsOffset;
        _numRestarts = block.RestartsOffset == 0 ? 0 : block.NumRestarts; // no entries: nothing to seek
        _handle = default;
        Invalidate();
    }

    public readonly bool Valid => _current < _restarts;

    public readonly ReadOnlySpan<byte> Key => _key.AsSpan(0, _keyLength);

    public readonly ReadOnlySpan<byte> Value => _block.Contents.Slice(_valueOffset, _valueLength);

    /// <summary>The current entry's block handle (index blocks only).</summary>
    public readonly BlockHandle Handle => _handle;

    /// <summary>Offset of the current value inside the block (for properties that record it).</summary>
    public readonly int ValueOffset => _valueOffset;

    public void SeekToFirst()
    {
        if (_numRestarts == 0)
        {
            Invalidate();
            return;
        }
        SeekToRestartPoint(0);
        ParseNextEntry();
    }

    public void SeekToLast()
    {
        if (_numRestarts == 0)
        {
            Invalidate();
            return;
        }
        SeekToRestartPoint(_numRestarts - 1);
        while (ParseNextEntry() && _next < _restarts)
        {
        }
    }

    /// <summary>Forgets the block (whose buffer is about to be released); the cursor stays invalid until <see cref="Reset"/>.</summary>
    public void Detach()
    {
        _restarts = 0;
        _numRestarts = 0;
        Invalidate();
    }

    /// <summary>Positions at the first entry whose key is &gt;= <paramref name="target"/>.</summary>
    public void Seek(ReadOnlySpan<byte> target)
    {
        if (_numRestarts == 0)
        {
            Invalidate();
            return;
        }
        int left;
        ReadOnlySpan<ulong> prefixes = _block.RestartPrefixes;
        if (prefixes.Length != 0 && prefixes.Length == _numRestarts)
        {
            left = LastRestartBefore(prefixes, target);
        }
        else
        {
            _block.PrefetchRestartKeys();
            left = 0;
            int right = _numRestarts - 1;
            while (left < right)
            {
                int mid = (left + right + 1) >>> 1;
                if (Compare(RestartKey(mid), target) < 0)
                {
                    left = mid;
                }
                else
                {
                    right = mid - 1;
                }
            }
        }
        SeekToRestartPoint(left);
        _block.PrefetchEntries(_next, left + 1 < _numRestarts ? _block.RestartPoint(left + 1) : _restarts);
        while (DecodeNextEntry() && Compare(Key, target) < 0)
        {
        }
        if (Valid)
        {
            SyncRestartIndex();
        }
    }

    /// <summary>
    /// Positions for a point lookup of internal seek key <paramref name="target"/> in a data block:
    /// where <see cref="Seek"/> would when the key's user key is in the block, and otherwise at some
    /// entry of another user key (not here, nor in a later block) or past the end (the caller
    /// tries the next block, as after Seek). A block with a hash index (<see cref="Block.HashBucket"/>)
    /// is searched as RocksDB's DataBlockIter::SeekForGet does: the bucket names the one restart
    /// interval that can hold the user key, scanned from its start up to the next interval's first
    /// entry; an empty bucket scans the last interval (the key may then continue in the next block);
    /// a collision, or a block without the index, takes the binary search. A bucket naming a restart
    /// the block lacks is corruption. Iterators never use this.
    /// </summary>
    public void SeekForGet(ReadOnlySpan<byte> target)
    {
        if (_block.HashBucketCount == 0 || _numRestarts == 0)
        {
            Seek(target);
            return;
        }
        byte bucket = _block.HashBucket(InternalKeys.UserKey(target));
        if (bucket == DataBlockHashIndex.Collision)
        {
            Seek(target);
            return;
        }
        int restart = bucket == DataBlockHashIndex.NoEntry ? _numRestarts - 1 : bucket;
        if (restart >= _numRestarts)
        {
            throw Corrupt(_restarts, $"data block hash index names restart {restart} of {_numRestarts}");
        }
        SeekToRestartPoint(restart);
        int limit = restart + 1 < _numRestarts ? _block.RestartPoint(restart + 1) : _restarts;
        _block.PrefetchEntries(_next, limit);
        while (DecodeNextEntry() && Compare(Key, target) < 0 && _current < limit)
        {
        }
        if (Valid)
        {
            if (Compare(Key, target) < 0 && InternalKeys.UserKey(Key).SequenceEqual(InternalKeys.UserKey(target)))
            {
                // Stopped on the next interval's first entry, below the target: another user key
                // answers "not in this block" (the key's interval would be the bucket's or a
                // collision). A newer version of the key itself would mean the bucket is wrong, so
                // such a block is searched in full rather than answered from that version.
                Seek(target);
                return;
            }
            SyncRestartIndex();
        }
    }

    /// <summary>
    /// The last restart whose key is &lt; <paramref name="target"/> (0 when none), found in the
    /// block's restart prefixes: restarts whose prefix is below the target's hold smaller keys, those
    /// above it larger ones (the prefix of a bytewise-ordered key never decreases), so only the run
    /// of restarts sharing the target's prefix, usually none or one, needs its keys compared.
    /// </summary>
    private readonly int LastRestartBefore(ReadOnlySpan<ulong> prefixes, ReadOnlySpan<byte> target)
    {
        ulong t = KeyPrefix.Of(_keyFormat == BlockKeyFormat.Bytewise ? target : InternalKeys.UserKey(target));
        int lo = 0;
        int hi = prefixes.Length;
        while (lo < hi)
        {
            int mid = (lo + hi) >>> 1;
            if (prefixes[mid] < t)
            {
                lo = mid + 1;
            }
            else
            {
                hi = mid;
            }
        }
        int left = lo - 1; // every restart before lo holds a smaller key
        int end = lo;
        while (end < prefixes.Length && prefixes[end] == t)
        {
            end++;
        }
        int a = lo;
        int b = end - 1;
        while (a <= b)
        {
            int mid = (a + b) >>> 1;
            if (Compare(RestartKey(mid), target) < 0)
            {
                left = mid;
                a = mid + 1;
            }
            else
            {
                b = mid - 1;
            }
        }
        return Math.Max(left, 0);
    }

    /// <summary>
    /// Gives the block its restart prefixes (see <see cref="Block.RestartPrefixes"/>): for a block
    /// searched for as long as it lives, before it is shared. A malformed restart leaves the block
    /// without them: the seek that reaches it reports the corruption.
    /// </summary>
    public readonly void BuildRestartPrefixes()
    {
        if (_numRestarts < MinRestartsForPrefixes || _numRestarts > SizeClasses.MaxSize / sizeof(ulong))
        {
            return; // too few to pay off; or (a block of hundreds of megabytes) more than one allocation holds
        }
        NativeBuffer buffer = NativeAllocator.Shared.Allocate(_numRestarts * sizeof(ulong), use: NativeUse.TableBlock);
        try
        {
            Span<ulong> prefixes = MemoryMarshal.Cast<byte, ulong>(buffer.Span);
            for (int i = 0; i < _numRestarts; i++)
            {
                ReadOnlySpan<byte> key = RestartKey(i);
                prefixes[i] = KeyPrefix.Of(_keyFormat == BlockKeyFormat.InternalKey ? InternalKeys.UserKey(key) : key);
            }
        }
        catch (KvCorruptionException)
        {
            buffer.Dispose();
            return;
        }
        _block.SetRestartPrefixes(buffer);
    }

    /// <summary>Blocks with fewer restarts search their entries directly (a few probes, the same cache lines).</summary>
    private const int MinRestartsForPrefixes = 64;

    /// <summary>Positions at the last entry whose key is &lt;= <paramref name="target"/>.</summary>
    public void SeekForPrev(ReadOnlySpan<byte> target)
    {
        Seek(target);
        if (!Valid)
        {
            SeekToLast();
        }
        while (Valid && Compare(Key, target) > 0)
        {
            Prev();
        }
    }

    public void Next()
    {
        if (Valid)
        {
            ParseNextEntry();
        }
    }

    public void Prev()
    {
        if (!Valid)
        {
            return;
        }
        int original = _current;
        while (_block.RestartPoint(_restartIndex) >= original)
        {
            if (_restartIndex == 0)
            {
                Invalidate();
                return;
            }
            _restartIndex--;
        }
        SeekToRestartPoint(_restartIndex);
        while (ParseNextEntry() && _next < original)
        {
        }
    }

    /// <summary>Compares a block key with a seek target according to the key format.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public readonly int Compare(ReadOnlySpan<byte> blockKey, ReadOnlySpan<byte> target) => _keyFormat switch
    {
        BlockKeyFormat.InternalKey => InternalKeyComparer.Compare(blockKey, target),
        BlockKeyFormat.UserKeyIndex => blockKey.SequenceCompareTo(InternalKeys.UserKey(target)),
        _ => blockKey.SequenceCompareTo(target),
    };

    public void Dispose()
    {
        byte[]? key = _key;
        _key = [];
        _keyLength = 0;
        if (key is { Length: > 0 })
        {
            BlockKeyBuffers.Return(key);
        }
        _current = _restarts;
        _next = _restarts;
    }

    private void Invalidate()
    {
        _current = _restarts;
        _next = _restarts;
        _restartIndex = _numRestarts;
        _keyLength = 0;
    }

    private void SeekToRestartPoint(int index)
    {
        _keyLength = 0;
        _restartIndex = index;
        _next = _block.RestartPoint(index);
    }

    /// <summary>The full key stored at a restart point (shared must be 0 there).</summary>
    private readonly ReadOnlySpan<byte> RestartKey(int index)
    {
        int p = _block.RestartPoint(index);
        ReadOnlySpan<byte> entries = _block.Contents[.._restarts];
        if (!Coding.TryDecodeVarint32(entries[p..], out uint shared, out int n1)
            || !Coding.TryDecodeVarint32(entries[(p + n1)..], out uint nonShared, out int n2))
        {
            throw Corrupt(p, "malformed entry header");
        }
        p += n1 + n2;
        if (_valueFormat != IndexValueFormat.DeltaHandle)
        {
            if (!Coding.TryDecodeVarint32(entries[p..], out _, out int n3))
            {
                throw Corrupt(p, "malformed value length");
            }
            p += n3;
        }
        if (shared != 0 || nonShared > (uint)(_restarts - p))
        {
            throw Corrupt(p, "restart entry is not a full key inside the block");
        }
        ReadOnlySpan<byte> key = entries.Slice(p, (int)nonShared);
        CheckKey(key.Length, p);
        return key;
    }

    /// <summary>Decodes the entry at <see cref="_next"/>; false (and invalid) at the end of the entries.</summary>
    private bool ParseNextEntry()
    {
        if (!DecodeNextEntry())
        {
            return false;
        }
        SyncRestartIndex();
        return true;
    }

    /// <summary>Moves <see cref="_restartIndex"/> to the last restart before the current entry (LevelDB's rule).</summary>
    private void SyncRestartIndex()
    {
        while (_restartIndex + 1 < _numRestarts && _block.RestartPoint(_restartIndex + 1) < _current)
        {
            _restartIndex++;
        }
    }

    /// <summary>
    /// <see cref="ParseNextEntry"/> without moving <see cref="_restartIndex"/>: a scan that calls
    /// it then calls <see cref="SyncRestartIndex"/> once, at the entry it stops on.
    /// </summary>
    private bool DecodeNextEntry()
    {
        _current = _next;
        int p = _current;
        if (p >= _restarts)
        {
            Invalidate();
            return false;
        }
        ReadOnlySpan<byte> entries = _block.Contents[.._restarts];
        if (!Coding.TryDecodeVarint32(entries[p..], out uint shared, out int n1)
            || !Coding.TryDecodeVarint32(entries[(p + n1)..], out uint nonShared, out int n2))
        {
            throw Corrupt(p, "malformed entry header");
        }
        p += n1 + n2;
        uint valueLength = 0;
        if (_valueFormat != IndexValueFormat.DeltaHandle)
        {
            if (!Coding.TryDecodeVarint32(entries[p..], out valueLength, out int n3))
            {
                throw Corrupt(p, "malformed value length");
            }
            p += n3;
        }
        if (shared > (uint)_keyLength || nonShared > (uint)(_restarts - p))
        {
            throw Corrupt(_current, "entry key runs outside the block or shares more than the previous key");
        }
        int keyLength = (int)shared + (int)nonShared;
        if (keyLength > _key.Length)
        {
            byte[] bigger = ArrayPool<byte>.Shared.Rent(Math.Max(keyLength, _key.Length * 2));
            _key.AsSpan(0, (int)shared).CopyTo(bigger);
            BlockKeyBuffers.Return(_key);
            _key = bigger;
        }
        entries.Slice(p, (int)nonShared).CopyTo(_key.AsSpan((int)shared));
        _keyLength = keyLength;
        p += (int)nonShared;
        CheckKey(keyLength, _current);

        if (_valueFormat == IndexValueFormat.DeltaHandle)
        {
            ReadOnlySpan<byte> v = entries[p..];
            int before = v.Length;
            DecodeHandle(ref v, shared != 0);
            _valueOffset = p;
            _valueLength = before - v.Length;
        }
        else
        {
            if (valueLength > (uint)(_restarts - p))
            {
                throw Corrupt(_current, "entry value runs outside the block");
            }
            _valueOffset = p;
            _valueLength = (int)valueLength;
            if (_valueFormat == IndexValueFormat.Handle)
            {
                ReadOnlySpan<byte> v = entries.Slice(p, (int)valueLength);
                DecodeHandle(ref v, isDelta: false);
            }
        }
        _next = _valueOffset + _valueLength;
        return true;
    }

    private void DecodeHandle(ref ReadOnlySpan<byte> v, bool isDelta)
    {
        if (isDelta)
        {
            if (!Coding.TryGetVarint64(ref v, out ulong zigzag))
            {
                throw Corrupt(_current, "malformed index size delta");
            }
            long delta = (long)(zigzag >> 1) ^ -(long)(zigzag & 1);
            ulong offset = _handle.Offset + _handle.Size + TableFormat.BlockTrailerSize;
            long size = (long)_handle.Size + delta;
            if (size < 0 || offset < _handle.Offset)
            {
                throw Corrupt(_current, "index size delta gives an impossible block handle");
            }
            _handle = new BlockHandle(offset, (ulong)size);
        }
        else if (!BlockHandle.TryDecode(ref v, out _handle))
        {
            throw Corrupt(_current, "malformed block handle in index entry");
        }
        if (_indexHasFirstKey && !Coding.TryGetLengthPrefixed(ref v, out _))
        {
            throw Corrupt(_current, "malformed first key in index entry");
        }
    }

    private readonly void CheckKey(int keyLength, int offset)
    {
        if (_keyFormat == BlockKeyFormat.InternalKey && keyLength < InternalKeys.TrailerSize)
        {
            throw Corrupt(offset, $"internal key of {keyLength} bytes is shorter than its 8-byte trailer");
        }
    }

    private readonly KvCorruptionException Corrupt(int offset, string what) =>
        new($"{_block.Source}: {what} (block offset {offset}).");
}
