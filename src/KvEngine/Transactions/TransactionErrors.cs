using System.Globalization;

namespace KvEngine.Transactions;

/// <summary>The retryable errors of an optimistic transaction's commit, made in one place. Stateless.</summary>
internal static class TransactionErrors
{
    /// <summary>RocksDB's Busy: a tracked key was written after the transaction tracked it.</summary>
    public static KvException Conflict(string family, ulong tracked, ulong latest) =>
        new KvBusyException(string.Create(CultureInfo.InvariantCulture,
            $"Write conflict: a key the transaction wrote or read for update in column family '{family}' was written at sequence {latest}, after the transaction's sequence {tracked}. Retry the transaction."));

    /// <summary>RocksDB's TryAgain: the memtables no longer reach back to the tracked sequence.</summary>
    public static KvException HistoryTooShort(ulong tracked, ulong earliest, string family) =>
        new KvException(string.Create(CultureInfo.InvariantCulture,
            $"Transaction could not check for conflicts at sequence {tracked}: the memtables of column family '{family}' hold writes only from sequence {earliest} on (the MemTable does not contain a long enough history). Retry the transaction."),
            KvStatusCode.TryAgain, KvStatusSubCode.None, null);
}
