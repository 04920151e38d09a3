using System.Text;
using KvEngine.Tests.Db;

namespace KvEngine.Tests.Transactions;

/// <summary>
/// Optimistic transactions: read-your-own-writes, the commit-time conflict check (write-write,
/// GetForUpdate, range deletion), save points, and RocksDB's TryAgain when the memtables no
/// longer reach back to the transaction's snapshot.
/// </summary>
public class OptimisticTransactionTests
{
    private static byte[] B(string s) => Encoding.ASCII.GetBytes(s);

    private static OptimisticTransactionDb Open()
    {
        var options = DbTestUtil.SmallOptions(DbTestUtil.NewFs(), writeBufferSize: 1 << 20, maxWriteBufferNumber: 4);
        options.MergeOperator = new StringAppendOperator((byte)',');
        return OptimisticTransactionDb.Open(DbTestUtil.DbPath, options);
    }

    [Fact]
    public void ReadsItsOwnWritesAndCommitsAtomically()
    {
        using OptimisticTransactionDb tdb = Open();
        KvDb db = tdb.BaseDb;
        db.Put(B("a"), B("1"));
        db.Put(B("b"), B("2"));
        db.Put(B("m"), B("x"));
        using (Transaction txn = tdb.BeginTransaction())
        {
            txn.Put(B("c"), B("3"));
            txn.Delete(B("a"));
            txn.Merge(B("m"), B("y"));
            Assert.Equal(B("3"), txn.Get(null, B("c")));
            Assert.Null(txn.Get(null, B("a")));
            Assert.Equal(B("x,y"), txn.Get(null, B("m")));
            Assert.Null(db.Get(B("c")));
            var keys = new List<string>();
            using (KvIteratorWithBase it = txn.NewIterator())
            {
                for (it.SeekToFirst(); it.Valid; it.Next())
                {
                    keys.Add(Encoding.ASCII.GetString(it.Key) + "=" + Encoding.ASCII.GetString(it.Value));
                }
            }
            Assert.Equal(["b=2", "c=3", "m=x,y"], keys);
            txn.Commit();
            Assert.True(txn.CommitSequence > 0);
            Assert.Throws<InvalidOperationException>(() => txn.Put(B("d"), B("4")));
        }
        Assert.Null(db.Get(B("a")));
        Assert.Equal(B("3"), db.Get(B("c")));
        Assert.Equal(B("x,y"), db.Get(B("m")));
    }

    [Fact]
    public void WriteAfterTrackingIsAConflict()
    {
        using OptimisticTransactionDb tdb = Open();
        KvDb db = tdb.BaseDb;
        db.Put(B("k"), B("0"));

        using (Transaction txn = tdb.BeginTransaction())
        {
            txn.Put(B("k"), B("txn"));
            db.Put(B("k"), B("other"));
            Assert.Throws<KvBusyException>(txn.Commit);
        }
        Assert.Equal(B("other"), db.Get(B("k")));

        using (Transaction txn = tdb.BeginTransaction())
        {
            Assert.Equal(B("other"), txn.GetForUpdate(null, B("k")));
            txn.Put(B("j"), B("derived"));
            db.Put(B("k"), B("again"));
            Assert.Throws<KvBusyException>(txn.Commit);
        }
        Assert.Null(db.Get(B("j")));

        using (Transaction txn = tdb.BeginTransaction())
        {
            txn.GetForUpdate(null, B("k"));
            txn.Put(B("j"), B("derived"));
            db.DeleteRange(B("a"), B("z"));
            Assert.Throws<KvBusyException>(txn.Commit);
        }

        using (Transaction txn = tdb.BeginTransaction())
        {
            txn.GetForUpdate(null, B("k"));
            txn.Put(B("j"), B("derived"));
            db.Put(B("unrelated"), B("1"));
            txn.Get(null, B("unrelated")); // a plain read is not tracked
            db.Put(B("unrelated"), B("2"));
            txn.Commit();
        }
        Assert.Equal(B("derived"), db.Get(B("j")));
    }

    [Fact]
    public void SnapshotMakesEarlierWritesConflict()
    {
        using OptimisticTransactionDb tdb = Open();
        KvDb db = tdb.BaseDb;
        using (Transaction txn = tdb.BeginTransaction(options: new OptimisticTransactionOptions { SetSnapshot = true }))
        {
            db.Put(B("k"), B("other")); // after the snapshot, before the transaction touches k
            txn.Put(B("k"), B("txn"));
            Assert.Throws<KvBusyException>(txn.Commit);
        }
        using (Transaction txn = tdb.BeginTransaction())
        {
            db.Put(B("k"), B("other2")); // no snapshot: tracked from the first touch on
            txn.Put(B("k"), B("txn"));
            txn.Commit();
        }
        Assert.Equal(B("txn"), db.Get(B("k")));
    }

    [Fact]
    public void RollbackToSavePointUntracksAndUndoes()
    {
        using OptimisticTransactionDb tdb = Open();
        KvDb db = tdb.BaseDb;
        using Transaction txn = tdb.BeginTransaction();
        txn.Put(B("a"), B("1"));
        txn.SetSavePoint();
        txn.Put(B("b"), B("2"));
        txn.GetForUpdate(null, B("c"));
        Assert.Equal(3, txn.TrackedKeys);
        txn.RollbackToSavePoint();
        Assert.Equal(1, txn.TrackedKeys);
        Assert.Null(txn.Get(null, B("b")));
        db.Put(B("c"), B("outside")); // no longer tracked: no conflict
        txn.Commit();
        Assert.Equal(B("1"), db.Get(B("a")));
        Assert.Null(db.Get(B("b")));
    }

    [Fact]
    public void ChecksConflictsAfterReopenFromTheWal()
    {
        var fs = DbTestUtil.NewFs();
        var options = DbTestUtil.SmallOptions(fs, writeBufferSize: 1 << 20, maxWriteBufferNumber: 4);
        using (OptimisticTransactionDb tdb = OptimisticTransactionDb.Open(DbTestUtil.DbPath, options))
        {
            tdb.BaseDb.Put(B("k"), B("0"));
            tdb.BaseDb.Put(B("j"), B("0"));
        }
        using (OptimisticTransactionDb tdb = OptimisticTransactionDb.Open(DbTestUtil.DbPath, options))
        {
            using (Transaction txn = tdb.BeginTransaction(options: new OptimisticTransactionOptions { SetSnapshot = true }))
            {
                txn.Put(B("k"), B("txn"));
                tdb.BaseDb.Put(B("k"), B("outside"));
                Assert.Throws<KvBusyException>(txn.Commit);
            }
            using (Transaction txn = tdb.BeginTransaction(options: new OptimisticTransactionOptions { SetSnapshot = true }))
            {
                txn.Put(B("j"), B("txn"));
                txn.Commit();
            }
            Assert.Equal(B("txn"), tdb.BaseDb.Get(B("j")));
        }
    }

    [Fact]
    public void FlushPastTheSnapshotGivesTryAgain()
    {
        using OptimisticTransactionDb tdb = Open();
        KvDb db = tdb.BaseDb;
        db.Put(B("k"), B("0"));

        using (Transaction txn = tdb.BeginTransaction(options: new OptimisticTransactionOptions { SetSnapshot = true }))
        {
            db.Put(B("other"), B("1"));
            txn.Put(B("k"), B("txn"));
            txn.Commit(); // the memtable still holds everything since the snapshot
        }

        using (Transaction txn = tdb.BeginTransaction(options: new OptimisticTransactionOptions { SetSnapshot = true }))
        {
            db.Put(B("k"), B("outside"));
            db.Flush(); // the outside write leaves the memtables: the check cannot see it
            txn.Put(B("k"), B("txn2"));
            KvException e = Assert.Throws<KvException>(txn.Commit);
            Assert.Equal(KvStatusCode.TryAgain, e.StatusCode);
        }
        Assert.Equal(B("outside"), db.Get(B("k")));

        // A transaction begun after the flush: the new memtable reaches back to its snapshot.
        using (Transaction txn = tdb.BeginTransaction(options: new OptimisticTransactionOptions { SetSnapshot = true }))
        {
            txn.Put(B("k"), B("txn3"));
            txn.Commit();
        }
        Assert.Equal(B("txn3"), db.Get(B("k")));
    }
}
