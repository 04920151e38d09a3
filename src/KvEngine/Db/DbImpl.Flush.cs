using KvEngine.Db.State;

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
        using CallScope call = EnterCall();
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
        await SwitchForFlush(families).WaitAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>FlushAsync's part inside the call gate: the switch; the wait for the flushes is outside it (Close fails those it will not run).</summary>
    private Task SwitchForFlush(IReadOnlyList<ColumnFamilyData>? families)
    {
        using CallScope call = EnterCall();
        FlushCore(families, wait: false);
        return PendingFlushes(families);
    }

    private Task PendingFlushes(IReadOnlyList<ColumnFamilyData>? families) => _flusher.PendingFlushes(families);
}
