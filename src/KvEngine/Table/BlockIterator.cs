using KvEngine.Iterators;

namespace KvEngine.Table;

/// <summary>
/// An <see cref="InternalIterator"/> over one block (range deletions, and metaindex or properties
/// blocks when iterated bytewise). Owns the block when asked to and disposes it with itself.
/// Not thread-safe.
/// </summary>
internal sealed class BlockIterator : InternalIterator
{
    private readonly Block _block;
    private readonly bool _ownsBlock;
    private readonly BlockKeyFormat _keyFormat;
    private BlockCursor _cursor;

    public BlockIterator(Block block, BlockKeyFormat keyFormat, bool ownsBlock)
    {
        _block = block;
        _ownsBlock = ownsBlock;
        _keyFormat = keyFormat;
        _cursor = new BlockCursor(block, keyFormat);
    }

    public override bool Valid => _cursor.Valid;

    public override ReadOnlySpan<byte> Key => _cursor.Key;

    public override ReadOnlySpan<byte> Value => _cursor.Value;

    public override void SeekToFirst() => _cursor.SeekToFirst();

    public override void SeekToLast() => _cursor.SeekToLast();

    public override void Seek(ReadOnlySpan<byte> target)
    {
        CheckTarget(target);
        _cursor.Seek(target);
    }

    public override void SeekForPrev(ReadOnlySpan<byte> target)
    {
        CheckTarget(target);
        _cursor.SeekForPrev(target);
    }

    public override void Next() => _cursor.Next();

    public override void Prev() => _cursor.Prev();

    private void CheckTarget(ReadOnlySpan<byte> target)
    {
        if (_keyFormat != BlockKeyFormat.Bytewise && target.Length < Format.InternalKeys.TrailerSize)
        {
            throw new ArgumentException("Seek targets are internal keys (user key + 8-byte trailer).", nameof(target));
        }
    }

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            _cursor.Dispose();
            if (_ownsBlock)
            {
                _block.Dispose();
            }
        }
        base.Dispose(disposing);
    }
}
