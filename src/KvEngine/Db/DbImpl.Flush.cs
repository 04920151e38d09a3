namespace KvEngine.Db;

/// <summary>
/// Flush requests (RocksDB's DB::Flush): a forced memtable switch through the write queue, then a
/// wait for the families' flushes, which <see cref="Background.FlushRunner"/> runs in the background.
/// </summary>
internal sealed partial class DbImpl
{
    /// <summary>Flushes the memtables of <paramref name="families"/> (every family when null) and waits for the tables.</summary>
    public void Flush(IReadOnlyList<ColumnFamilyData>? families = null)
    {
        ThrowIfDisposed();
        ThrowIfReadOnly("Flush");
        FlushCore(families, wait: true);
    }

    /// <summary>Switches the families' memtables (serialized with writes) and, when asked, waits for their flush.</summary>
    private void FlushCore(IReadOnlyList<ColumnFamilyData>? families, bool wait)
    {
        if (_options.AtomicFlush)
        {
            families = null; // atomic flush: every family with data goes into tables together
        }
        _writer.SwitchMemTables(families);
        Task pending = PendingFlushes(families);
        if (wait)
        {
            pending.GetAwaiter().GetResult();
        }
    }

    public async ValueTask FlushAsync(IReadOnlyList<ColumnFamilyData>? families, CancellationToken cancellationToken)
    {
        ThrowIfDisposed();
        ThrowIfReadOnly("Flush");
        cancellationToken.ThrowIfCancellationRequested();
        FlushCore(families, wait: false);
        await PendingFlushes(families).WaitAsync(cancellationToken).ConfigureAwait(false);
    }

    private Task PendingFlushes(IReadOnlyList<ColumnFamilyData>? families) => _flusher.PendingFlushes(families);
}
