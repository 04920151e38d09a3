namespace KvEngine.Iterators;

/// <summary>
/// A cursor over internal keys (user key + fixed64 trailer) in <see cref="Format.InternalKeyComparer"/>
/// order: memtables, blocks, tables, merges of these.
/// <para>
/// Contract: after construction the iterator is not <see cref="Valid"/> until positioned.
/// <see cref="Key"/> and <see cref="Value"/> may be read only while Valid, and the spans they return
/// stay good only until the next move or Dispose. Next/Prev require Valid. Corrupt data raises
/// <see cref="KvCorruptionException"/> from the move that met it. Not thread-safe: one user at a
/// time; Dispose releases whatever the iterator pins (blocks, memtables, files).
/// </para>
/// </summary>
internal abstract class InternalIterator : IDisposable
{
    public abstract bool Valid { get; }

    public abstract void SeekToFirst();

    public abstract void SeekToLast();

    /// <summary>Positions at the first entry whose key is &gt;= <paramref name="target"/> (an internal key).</summary>
    public abstract void Seek(ReadOnlySpan<byte> target);

    /// <summary>Positions at the last entry whose key is &lt;= <paramref name="target"/> (an internal key).</summary>
    public abstract void SeekForPrev(ReadOnlySpan<byte> target);

    public abstract void Next();

    public abstract void Prev();

    /// <summary>The current internal key.</summary>
    public abstract ReadOnlySpan<byte> Key { get; }

    public abstract ReadOnlySpan<byte> Value { get; }

    /// <summary>
    /// False only when this source provably holds no entry for <paramref name="userKey"/> (a table's
    /// filter says so); true when it may, or cannot tell. Cheap next to a seek, and leaves the
    /// position as it was: a newest-first <see cref="MergingIterator"/> asks it before seeking.
    /// </summary>
    public virtual bool MayContainUserKey(ReadOnlySpan<byte> userKey) => true;

    /// <summary>
    /// Releases the blocks (cache entries, index leases) the iterator pins, leaving it not Valid;
    /// what it needs is pinned again at the next positioning. Memtable iterators pin nothing.
    /// </summary>
    public virtual void Unpin()
    {
    }

    public void Dispose()
    {
        Dispose(true);
        GC.SuppressFinalize(this);
    }

    protected virtual void Dispose(bool disposing)
    {
    }
}
