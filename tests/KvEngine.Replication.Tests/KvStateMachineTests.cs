using System.Text;
using DotNext.Net.Cluster.Consensus.Raft.StateMachine;

namespace KvEngine.Replication.Tests;

public sealed class KvStateMachineTests
{
    private static KvStateMachineOptions Counting(long snapshotInterval = 10_000) => new()
    {
        DatabaseOptions = new KvOptions { MergeOperator = UInt64AddOperator.Instance },
        SnapshotInterval = snapshotInterval,
    };

    private static ulong Counter(LocalReplica replica, string key) =>
        replica.Get(key) is { } value ? UInt64AddOperator.Decode(value) : 0;

    [Fact]
    public async Task Applies_committed_batches_and_stores_the_applied_index_with_them()
    {
        using var dir = new TempDirectory();
        await using (LocalReplica replica = await LocalReplica.OpenAsync(dir.Path))
        {
            long last = await replica.AppendAndApplyAsync(LocalReplica.Put("a", "1"), LocalReplica.Put("b", "2"), LocalReplica.Put("a", "3"));
            Assert.Equal(3, last);
            Assert.Equal(3, replica.Machine.AppliedIndex);
            Assert.Equal(1, replica.Machine.AppliedTerm);
            Assert.Equal("3", Encoding.UTF8.GetString(replica.Get("a")!));
            Assert.Equal("2", Encoding.UTF8.GetString(replica.Get("b")!));
        }
        // The applied state lives in the database's own column family (an ordinary KvEngine database).
        string dbPath = Directory.GetDirectories(dir.Path, "db-*").Single();
        using KvDb db = KvDb.OpenReadOnly(dbPath, new KvOptions(), [new ColumnFamilyDescriptor("default"), new ColumnFamilyDescriptor("kvengine_raft")]);
        byte[] applied = db.Get(db.GetColumnFamily("kvengine_raft")!, "applied"u8)!;
        Assert.Equal(new AppliedState(3, 1), AppliedState.Decode(applied));
    }

    [Fact]
    public async Task Restart_replays_the_log_without_applying_an_entry_twice()
    {
        using var dir = new TempDirectory();
        await using (LocalReplica replica = await LocalReplica.OpenAsync(dir.Path, Counting()))
        {
            for (int i = 0; i < 5; i++)
            {
                await replica.AppendAndApplyAsync(LocalReplica.Add("n", 1));
            }
            Assert.Equal(5UL, Counter(replica, "n"));
        }
        await using (LocalReplica replica = await LocalReplica.OpenAsync(dir.Path, Counting()))
        {
            // The log replays its committed entries 1..5 into the machine: each is skipped.
            Assert.Equal(5, replica.Log.LastCommittedEntryIndex);
            Assert.Equal(5, replica.Machine.AppliedIndex);
            Assert.Equal(5UL, Counter(replica, "n"));
            await replica.AppendAndApplyAsync(LocalReplica.Add("n", 1));
            Assert.Equal(6UL, Counter(replica, "n"));
            Assert.Equal(6, replica.Machine.AppliedIndex);
        }
    }

    [Fact]
    public async Task A_crash_image_taken_without_closing_resumes_at_its_applied_index()
    {
        using var dir = new TempDirectory();
        string live = dir.Sub("live");
        string image = dir.Sub("image");
        await using (LocalReplica replica = await LocalReplica.OpenAsync(live, Counting()))
        {
            for (int i = 0; i < 4; i++)
            {
                await replica.AppendAndApplyAsync(LocalReplica.Add("n", 1));
            }
            // What a kill -9 leaves: every file as written so far (nothing closed, nothing flushed by
            // a clean shutdown), minus the lock a dead process no longer holds.
            CopyTree(live, image);
        }
        await using (LocalReplica replica = await LocalReplica.OpenAsync(image, Counting()))
        {
            Assert.Equal(4, replica.Machine.AppliedIndex);
            Assert.Equal(4UL, Counter(replica, "n"));
            await replica.AppendAndApplyAsync(LocalReplica.Add("n", 10));
            Assert.Equal(14UL, Counter(replica, "n"));
        }
    }

    [Fact]
    public async Task A_batch_the_database_refuses_is_skipped_but_its_index_is_applied()
    {
        using var dir = new TempDirectory();
        await using LocalReplica replica = await LocalReplica.OpenAsync(dir.Path);
        byte[] garbage = [1, 2, 3];
        long last = await replica.AppendAndApplyAsync(garbage, LocalReplica.Put("k", "v"));
        Assert.Equal(2, last);
        Assert.Equal(2, replica.Machine.AppliedIndex);
        Assert.Equal("v", Encoding.UTF8.GetString(replica.Get("k")!));
        // A batch naming a column family this database lacks is refused before the database's WAL.
        await replica.AppendAndApplyAsync(ForeignFamilyBatch(dir.Sub("foreign")), LocalReplica.Put("k", "w"));
        Assert.Equal(4, replica.Machine.AppliedIndex);
        Assert.Null(replica.Get("x"));
        Assert.Equal("w", Encoding.UTF8.GetString(replica.Get("k")!));
    }

    /// <summary>A batch writing column family id 2 of another database (the replica has ids 0 and 1).</summary>
    private static byte[] ForeignFamilyBatch(string path)
    {
        using KvDb other = KvDb.Open(path);
        other.CreateColumnFamily("one");
        ColumnFamilyHandle two = other.CreateColumnFamily("two");
        using var batch = new WriteBatch();
        batch.Put(two, "x"u8, "y"u8);
        return batch.Data.ToArray();
    }

    [Fact]
    public async Task Snapshots_are_checkpoints_taken_every_interval_and_old_ones_are_reclaimed()
    {
        using var dir = new TempDirectory();
        await using LocalReplica replica = await LocalReplica.OpenAsync(dir.Path, Counting(snapshotInterval: 3));
        for (int i = 0; i < 7; i++)
        {
            await replica.AppendAndApplyAsync(LocalReplica.Add("n", 1));
        }
        Assert.Equal(6, replica.Machine.SnapshotIndex);
        ISnapshot snapshot = ((ISnapshotManager)replica.Machine).Snapshot!;
        Assert.Equal(6, snapshot.Index);
        Assert.Equal(1, snapshot.Term);
        // The checkpoint is an ordinary database holding the state at index 6.
        string checkpoint = Directory.GetDirectories(Path.Combine(dir.Path, "snapshots")).Single(d => Path.GetFileName(d).StartsWith("00000000000000000006", StringComparison.Ordinal));
        using (KvDb db = KvDb.OpenReadOnly(checkpoint, new KvOptions { MergeOperator = UInt64AddOperator.Instance },
            [new ColumnFamilyDescriptor("default", new ColumnFamilyOptions { MergeOperator = UInt64AddOperator.Instance }), new ColumnFamilyDescriptor("kvengine_raft")]))
        {
            Assert.Equal(6UL, UInt64AddOperator.Decode(db.Get("n"u8)!));
        }
        await ((ISnapshotManager)replica.Machine).ReclaimGarbageAsync(6, CancellationToken.None);
        string[] left = Directory.GetDirectories(Path.Combine(dir.Path, "snapshots")).Select(Path.GetFileName).ToArray()!;
        Assert.Equal([checkpoint.Split(Path.DirectorySeparatorChar)[^1]], left);
    }

    [Fact]
    public async Task A_snapshot_installs_into_an_empty_node_which_then_goes_on_applying()
    {
        using var dir = new TempDirectory();
        await using LocalReplica source = await LocalReplica.OpenAsync(dir.Sub("source"), Counting(snapshotInterval: 4));
        for (int i = 0; i < 4; i++)
        {
            await source.AppendAndApplyAsync(LocalReplica.Add("n", 2), LocalReplica.Put("k" + i, "v" + i));
        }
        var snapshot = (ISnapshot)((ISnapshotManager)source.Machine).Snapshot!;
        Assert.Equal(8, snapshot.Index);

        await using LocalReplica target = await LocalReplica.OpenAsync(dir.Sub("target"), Counting());
        string before = target.Machine.DatabasePath;
        // The follower's path of InstallSnapshot: the log appends the snapshot at its index and
        // hands it to the state machine, which reads the archive the leader streams.
        await target.Log.AppendAsync(snapshot, snapshot.Index);
        Assert.Equal(8, target.Machine.AppliedIndex);
        Assert.Equal(8, target.Machine.SnapshotIndex);
        Assert.NotEqual(before, target.Machine.DatabasePath);
        Assert.False(Directory.Exists(before));
        Assert.Equal(8UL, Counter(target, "n"));
        Assert.Equal("v3", Encoding.UTF8.GetString(target.Get("k3")!));

        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        long next = await target.Log.AppendAsync(new DotNext.Net.Cluster.Consensus.Raft.BinaryLogEntry { Content = LocalReplica.Add("n", 1), Term = 1 }, cts.Token);
        Assert.Equal(9, next);
        await target.Log.CommitAsync(next, cts.Token);
        await target.Log.WaitForApplyAsync(next, cts.Token);
        Assert.Equal(9UL, Counter(target, "n"));
    }

    [Fact]
    public async Task Reopening_after_a_snapshot_install_keeps_the_installed_database()
    {
        using var dir = new TempDirectory();
        await using (LocalReplica source = await LocalReplica.OpenAsync(dir.Sub("source"), Counting(snapshotInterval: 2)))
        {
            await source.AppendAndApplyAsync(LocalReplica.Add("n", 5), LocalReplica.Add("n", 5));
            var snapshot = (ISnapshot)((ISnapshotManager)source.Machine).Snapshot!;
            await using LocalReplica target = await LocalReplica.OpenAsync(dir.Sub("target"), Counting());
            await target.Log.AppendAsync(snapshot, snapshot.Index);
        }
        await using LocalReplica reopened = await LocalReplica.OpenAsync(dir.Sub("target"), Counting());
        Assert.Equal(2, reopened.Machine.AppliedIndex);
        Assert.Equal(2, reopened.Machine.SnapshotIndex);
        Assert.Equal(10UL, Counter(reopened, "n"));
    }

    private static void CopyTree(string from, string to)
    {
        Directory.CreateDirectory(to);
        foreach (string file in Directory.GetFiles(from))
        {
            if (Path.GetFileName(file) != "LOCK")
            {
                File.Copy(file, Path.Combine(to, Path.GetFileName(file)));
            }
        }
        foreach (string sub in Directory.GetDirectories(from))
        {
            CopyTree(sub, Path.Combine(to, Path.GetFileName(sub)));
        }
    }
}
