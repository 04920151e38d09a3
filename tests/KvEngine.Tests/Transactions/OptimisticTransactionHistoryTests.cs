using System.Buffers.Binary;
using System.Collections.Concurrent;
using System.Text;
using KvEngine.Tests.Db;

namespace KvEngine.Tests.Transactions;

/// <summary>
/// Many threads run random read-modify-write transfers between accounts as optimistic
/// transactions, retrying on a conflict (Busy) or an undecidable check (TryAgain, provoked by
/// flushes), while read-only audits sum every account at their snapshot. Every committed
/// transaction's history is then checked: each value it read is the newest version committed at
/// or before its snapshot (snapshot isolation); no other committed transaction wrote a key it
/// wrote or read for update between its snapshot and its commit (write-conflict detection); the
/// database ends equal to the committed transactions replayed in commit order; and the total of
/// the balances never changes, in the final state or in any audit.
/// </summary>
public class OptimisticTransactionHistoryTests
{
    private const int Accounts = 8;
    private const long Initial = 1000;
    private const int Rounds = 120;

    /// <summary>A value: the balance and the id of the transaction that wrote it (0: the initial load).</summary>
    private static byte[] Encode(long balance, int writer)
    {
        var v = new byte[12];
        BinaryPrimitives.WriteInt64LittleEndian(v, balance);
        BinaryPrimitives.WriteInt32LittleEndian(v.AsSpan(8), writer);
        return v;
    }

    private static (long Balance, int Writer) Decode(byte[] v) =>
        (BinaryPrimitives.ReadInt64LittleEndian(v), BinaryPrimitives.ReadInt32LittleEndian(v.AsSpan(8)));

    private static byte[] Account(int i) => Encoding.ASCII.GetBytes("acct" + i);

    private sealed record Committed(int Id, ulong Snapshot, ulong Commit, Dictionary<int, int> ReadWriters, Dictionary<int, long> Writes);

    [Theory]
    [InlineData(1, 4)]
    [InlineData(2, 8)]
    public void CommittedHistoryIsSnapshotIsolated(int seed, int threads)
    {
        var options = DbTestUtil.SmallOptions(DbTestUtil.NewFs(), writeBufferSize: 64 << 10, maxWriteBufferNumber: 4);
        options.AllowConcurrentMemtableWrite = seed % 2 == 0;
        using OptimisticTransactionDb tdb = OptimisticTransactionDb.Open(DbTestUtil.DbPath, options);
        KvDb db = tdb.BaseDb;
        for (int i = 0; i < Accounts; i++)
        {
            db.Put(Account(i), Encode(Initial, 0));
        }
        var committed = new ConcurrentBag<Committed>();
        var auditSums = new ConcurrentBag<long>();
        var errors = new ConcurrentBag<Exception>();
        int nextId = 0;
        long conflicts = 0;
        long tryAgains = 0;
        using var start = new Barrier(threads);
        using var round = new Barrier(threads);
        var workers = new Thread[threads];
        for (int t = 0; t < threads; t++)
        {
            int threadSeed = seed * 1000 + t;
            workers[t] = new Thread(() =>
            {
                try
                {
                    Work(threadSeed);
                }
                catch (Exception e)
                {
                    errors.Add(e);
                    round.RemoveParticipant(); // the others must not wait for this thread
                }
            });
            void Work(int threadSeed)
            {
                var rng = new Random(threadSeed);
                start.SignalAndWait();
                for (int n = 0; n < Rounds; n++)
                {
                    if (rng.Next(10) == 0)
                    {
                        Audit(tdb, auditSums);
                        round.SignalAndWait();
                        continue;
                    }
                    int a = rng.Next(Accounts);
                    int b = (a + 1 + rng.Next(Accounts - 1)) % Accounts;
                    long amount = rng.Next(1, 50);
                    bool flush = rng.Next(30) == 0;
                    for (int attempt = 0; ; attempt++)
                    {
                        int id = Interlocked.Increment(ref nextId);
                        using Transaction txn = tdb.BeginTransaction(options: new OptimisticTransactionOptions { SetSnapshot = true });
                        var read = new ReadOptions { Snapshot = txn.Snapshot };
                        (long balanceA, int writerA) = Decode(txn.GetForUpdate(read, Account(a))!);
                        (long balanceB, int writerB) = Decode(txn.GetForUpdate(read, Account(b))!);
                        txn.Put(Account(a), Encode(balanceA - amount, id));
                        txn.Put(Account(b), Encode(balanceB + amount, id));
                        if (attempt == 0)
                        {
                            // Every thread's first attempt of the round has read before any commits:
                            // transfers sharing an account overlap, whatever the timing.
                            round.SignalAndWait();
                            if (flush)
                            {
                                db.Flush(); // writes since some snapshots leave the memtables (TryAgain)
                            }
                        }
                        try
                        {
                            txn.Commit();
                        }
                        catch (KvBusyException)
                        {
                            Interlocked.Increment(ref conflicts);
                            continue;
                        }
                        catch (KvException e) when (e.StatusCode == KvStatusCode.TryAgain)
                        {
                            Interlocked.Increment(ref tryAgains);
                            continue;
                        }
                        committed.Add(new Committed(id, txn.Snapshot!.Sequence, txn.CommitSequence,
                            new() { [a] = writerA, [b] = writerB },
                            new() { [a] = balanceA - amount, [b] = balanceB + amount }));
                        break;
                    }
                }
            }
            workers[t].Start();
        }
        foreach (Thread w in workers)
        {
            w.Join();
        }

        Assert.Empty(errors);
        CheckHistory([.. committed.OrderBy(c => c.Commit)], db);
        Assert.True(conflicts > 0, "the workload must produce conflicts for the check to be exercised");
        foreach (long sum in auditSums)
        {
            Assert.Equal(Accounts * Initial, sum);
        }
    }

    private static void Audit(OptimisticTransactionDb tdb, ConcurrentBag<long> sums)
    {
        using Transaction txn = tdb.BeginTransaction(options: new OptimisticTransactionOptions { SetSnapshot = true });
        var read = new ReadOptions { Snapshot = txn.Snapshot };
        long sum = 0;
        for (int i = 0; i < Accounts; i++)
        {
            sum += Decode(txn.Get(read, Account(i))!).Balance;
        }
        sums.Add(sum);
        txn.Rollback();
    }

    /// <summary>The history checker (see the class summary).</summary>
    private static void CheckHistory(List<Committed> history, KvDb db)
    {
        // Versions of each account in commit order: (commit sequence, writer id); the load is sequence 0.
        var versions = new List<(ulong Commit, int Writer, long Balance)>[Accounts];
        for (int i = 0; i < Accounts; i++)
        {
            versions[i] = [(0, 0, Initial)];
        }
        for (int h = 0; h < history.Count; h++)
        {
            Committed c = history[h];
            Assert.True(h == 0 || history[h - 1].Commit < c.Commit, "two transactions share a commit sequence");
            Assert.True(c.Snapshot < c.Commit);
            foreach ((int account, int writer) in c.ReadWriters)
            {
                // Snapshot isolation: the version read is the newest committed at or before the snapshot.
                (ulong _, int newest, long _) = versions[account].FindLast(v => v.Commit <= c.Snapshot);
                Assert.True(newest == writer,
                    $"transaction {c.Id} read account {account} as written by {writer}, but {newest} was newest at its snapshot {c.Snapshot}");
                // Write-conflict detection: nobody committed the key between the snapshot and this commit.
                (ulong commit, int between, long _) = versions[account][^1];
                Assert.True(commit <= c.Snapshot,
                    $"transaction {c.Id} (snapshot {c.Snapshot}, commit {c.Commit}) committed over transaction {between}'s write of account {account} at {commit}");
            }
            foreach ((int account, long balance) in c.Writes)
            {
                versions[account].Add((c.Commit, c.Id, balance));
            }
            long total = 0;
            for (int i = 0; i < Accounts; i++)
            {
                total += versions[i][^1].Balance;
            }
            Assert.Equal(Accounts * Initial, total);
        }
        for (int i = 0; i < Accounts; i++)
        {
            (long balance, int writer) = Decode(db.Get(Account(i))!);
            Assert.Equal(versions[i][^1].Writer, writer);
            Assert.Equal(versions[i][^1].Balance, balance);
        }
    }
}
