using KvEngine.Db;
using KvEngine.Db.State;
using KvEngine.Memtable;
using static KvEngine.Tests.Db.DbTestUtil;

namespace KvEngine.Tests.Db.Background;

/// <summary>
/// What a Flush caller waits for: a flush records its table (its memtables leave the family's
/// waiting list) before it sweeps the files it made obsolete and reports them flushed, so a Flush
/// that starts in between must wait on the running flush too, or it returns with the freed WAL
/// still on disk (seen as DestroyTests.RefusesAnOpenDatabaseAndDeletesNothing failing under the
/// full suite's parallel load: a family's flush ran between Flush's switch and its wait).
/// </summary>
public sealed class FlushWaitTests
{
    [Fact]
    public async Task PendingFlushesIncludeARunningFlushWhoseMemTablesAlreadyLeftTheWaitingList()
    {
        using KvDb db = KvDb.Open(DbPath, new KvOptions { FileSystem = NewFs() });
        DbImpl impl = db.Impl;
        ColumnFamilyData cfd = impl.DefaultFamily;
        using var mem = new MemTable();
        var running = new ImmutableMemTable(mem, nextLogNumber: 0);
        using (impl.Mutex.Lock())
        {
            Assert.Empty(cfd.Immutable);
            cfd.StartFlush([running]); // recorded: no longer in Immutable, not yet reported flushed
        }
        try
        {
            Task pending = impl.Flusher.PendingFlushes(null);
            Assert.False(pending.IsCompleted);
            running.Flushed.TrySetResult(); // the running flush has swept and reports done
            await pending;
        }
        finally
        {
            using (impl.Mutex.Lock())
            {
                cfd.EndFlush();
            }
        }
        Assert.True(impl.Flusher.PendingFlushes(null).IsCompleted);
    }
}
