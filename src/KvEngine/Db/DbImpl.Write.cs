namespace KvEngine.Db;

/// <summary>
/// Write dispatch: the checks of the database's state, then the write path
/// (<see cref="Write.DbWriter"/>: writer queue, memtable switch, WAL, memtable inserts). Every
/// write is a call of the <see cref="CallGate"/>, so Close frees the WAL and the memtables only
/// once no write is inside.
/// </summary>
internal sealed partial class DbImpl
{
    public void Write(WriteBatch batch, WriteOptions options)
    {
        using CallScope call = EnterCall();
        ThrowIfReadOnly("Write");
        _writer.Write(batch, options);
    }

    /// <summary>A write refused by <paramref name="validator"/> when its check fails (see <see cref="Write.DbWriter.Write(WriteBatch, WriteOptions, Write.IWriteValidator)"/>).</summary>
    public void Write(WriteBatch batch, WriteOptions options, Write.IWriteValidator validator)
    {
        using CallScope call = EnterCall();
        ThrowIfReadOnly("Write");
        _writer.Write(batch, options, validator);
    }

    public ValueTask WriteAsync(WriteBatch batch, WriteOptions options, CancellationToken cancellationToken)
    {
        using CallScope call = EnterCall(); // a request this call queues behind a leader is that leader's to finish (inside its own call)
        ThrowIfReadOnly("Write");
        cancellationToken.ThrowIfCancellationRequested();
        return _writer.WriteAsync(batch, options);
    }

    /// <summary>Batches inserted by their own writer thread in a concurrent group (tests, diagnostics).</summary>
    internal long MemberInserts => _writer.MemberInserts;
}
