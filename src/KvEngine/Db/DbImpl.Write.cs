namespace KvEngine.Db;

/// <summary>
/// Write dispatch: the checks of the database's state, then the write path
/// (<see cref="Write.DbWriter"/>: writer queue, memtable switch, WAL, memtable inserts).
/// </summary>
internal sealed partial class DbImpl
{
    public void Write(WriteBatch batch, WriteOptions options)
    {
        ThrowIfDisposed();
        ThrowIfReadOnly("Write");
        _writer.Write(batch, options);
    }

    public ValueTask WriteAsync(WriteBatch batch, WriteOptions options, CancellationToken cancellationToken)
    {
        ThrowIfDisposed();
        ThrowIfReadOnly("Write");
        cancellationToken.ThrowIfCancellationRequested();
        return _writer.WriteAsync(batch, options);
    }

    /// <summary>Batches inserted by their own writer thread in a concurrent group (tests, diagnostics).</summary>
    internal long MemberInserts => _writer.MemberInserts;
}
