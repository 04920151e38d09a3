namespace KvEngine;

/// <summary>
/// A database whose writes can be grouped in optimistic transactions (RocksDB's
/// OptimisticTransactionDB): <see cref="BeginTransaction"/> returns a <see cref="Transaction"/>
/// that buffers its writes and reads its own writes; its <see cref="Transaction.Commit"/> writes
/// them atomically unless another write touched one of its keys after the transaction's snapshot,
/// in which case it throws <see cref="KvBusyException"/> (or a <see cref="KvException"/> with status
/// <see cref="KvStatusCode.TryAgain"/> when the check cannot decide) and writes nothing. No lock
/// is taken before the commit, so transactions never wait for each other; under contention they
/// retry instead.
/// <para>
/// The validation is RocksDB's serial one (OccValidationPolicy kValidateSerial): at commit, in the
/// write path, after every earlier write reached the memtables and before the transaction's
/// writes take their sequence numbers, each tracked key's newest sequence in the memtables is
/// compared with the transaction's. Writes made directly through <see cref="BaseDb"/> count as
/// conflicting writes too.
/// </para>
/// <para>Thread-safe: transactions may run on many threads; each transaction is used by one thread at a time.</para>
/// </summary>
public sealed class OptimisticTransactionDb : IDisposable
{
    private readonly bool _ownsDb;

    /// <summary>Wraps an open database; disposing the result does not dispose <paramref name="db"/>.</summary>
    public OptimisticTransactionDb(KvDb db)
        : this(db, ownsDb: false)
    {
    }

    private OptimisticTransactionDb(KvDb db, bool ownsDb)
    {
        ArgumentNullException.ThrowIfNull(db);
        BaseDb = db;
        _ownsDb = ownsDb;
    }

    /// <summary>The database the transactions write to (RocksDB's GetBaseDB), for reads and plain writes.</summary>
    public KvDb BaseDb { get; }

    /// <summary>Opens the database at <paramref name="path"/> (see <see cref="KvDb.Open(string, KvOptions?)"/>); disposing the result closes it.</summary>
    public static OptimisticTransactionDb Open(string path, KvOptions? options = null) => new(KvDb.Open(path, options), ownsDb: true);

    /// <summary>Opens the database with its column families (see <see cref="KvDb.Open(string, KvOptions, IEnumerable{ColumnFamilyDescriptor})"/>); disposing the result closes it.</summary>
    public static OptimisticTransactionDb Open(string path, KvOptions options, IEnumerable<ColumnFamilyDescriptor> columnFamilies) =>
        new(KvDb.Open(path, options, columnFamilies), ownsDb: true);

    /// <summary>Starts a transaction (RocksDB's BeginTransaction).</summary>
    /// <param name="writeOptions">Options of the commit's write (Sync, DisableWal).</param>
    /// <param name="options">Transaction options (take a snapshot at the start).</param>
    public Transaction BeginTransaction(WriteOptions? writeOptions = null, OptimisticTransactionOptions? options = null) =>
        new(BaseDb, writeOptions ?? new WriteOptions(), options?.SetSnapshot ?? false);

    /// <summary>Closes the database when this object opened it.</summary>
    public void Dispose()
    {
        if (_ownsDb)
        {
            BaseDb.Dispose();
        }
    }
}
