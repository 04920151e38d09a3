using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using KvEngine.Replication;

namespace KvEngine.DbBench;

/// <summary>
/// kvbench -benchmarks=raftbench: the same writes and reads on one KvDb and on a three-node
/// KvEngine.Replication cluster on 127.0.0.1 (three ReplicatedKvNodes in this process, DotNext's
/// TCP transport). -num writes of a -value_size value (16-byte keys) spread over -threads
/// concurrent clients, each a WriteBatch of one Put (KvDb.WriteAsync / the leader's WriteAsync:
/// committed by a majority and applied); then -num reads of written keys: KvDb.Get, the leader's
/// linearizable GetAsync (a ReadIndex round each), and a follower's stale read. Prints ops/s and
/// the latency histogram (microseconds) of each, db_bench style. Not a db_bench benchmark: RocksDB
/// has no equivalent.
/// </summary>
internal sealed class RaftBench(BenchFlags flags)
{
    private readonly int _threads = flags.ThreadsSet ? flags.Threads : 1;

    public int Run()
    {
        string root = Path.Combine(flags.Db, "raftbench-" + Environment.ProcessId.ToString(CultureInfo.InvariantCulture));
        Directory.CreateDirectory(root);
        try
        {
            Console.WriteLine($"raftbench: num={flags.Num} value_size={flags.ValueSize} threads={_threads} cores={Environment.ProcessorCount}");
            RunSingleAsync(Path.Combine(root, "single")).GetAwaiter().GetResult();
            RunClusterAsync(root).GetAwaiter().GetResult();
            return 0;
        }
        finally
        {
            Directory.Delete(root, recursive: true);
        }
    }

    private async Task RunSingleAsync(string path)
    {
        using KvDb db = KvDb.Open(path);
        await MeasureAsync("one node: KvDb.WriteAsync", async (key, value) =>
        {
            using var batch = new WriteBatch();
            batch.Put(key, value);
            await db.WriteAsync(batch);
        });
        await MeasureAsync("one node: KvDb.Get", (key, _) =>
        {
            _ = db.Get(key) ?? throw new InvalidOperationException("A written key is missing.");
            return Task.CompletedTask;
        });
    }

    private async Task RunClusterAsync(string root)
    {
        IPEndPoint[] members = FreeEndPoints(3);
        var nodes = new List<ReplicatedKvNode>();
        try
        {
            for (int i = 0; i < 3; i++)
            {
                var options = new ReplicatedKvNodeOptions
                {
                    LocalEndPoint = members[i],
                    DataDirectory = Path.Combine(root, "node" + i.ToString(CultureInfo.InvariantCulture)),
                    LowerElectionTimeout = 300,
                    UpperElectionTimeout = 600,
                };
                foreach (IPEndPoint m in members)
                {
                    options.Members.Add(m);
                }
                nodes.Add(await ReplicatedKvNode.StartAsync(options));
            }
            await nodes[0].WaitForLeaderAsync(TimeSpan.FromSeconds(30));
            ReplicatedKvNode leader = await WaitAsync(() => nodes.FirstOrDefault(n => n.IsLeader));
            ReplicatedKvNode follower = nodes.First(n => !ReferenceEquals(n, leader));
            await MeasureAsync("3-node cluster: leader WriteAsync (majority commit)", async (key, value) =>
            {
                using var batch = new WriteBatch();
                batch.Put(key, value);
                await leader.WriteAsync(batch);
            });
            await MeasureAsync("3-node cluster: leader GetAsync (linearizable)", async (key, _) =>
                _ = await leader.GetAsync(key, ReadConsistency.Linearizable) ?? throw new InvalidOperationException("A written key is missing."));
            long applied = leader.AppliedIndex;
            await WaitAsync(() => follower.AppliedIndex >= applied ? follower : null);
            await MeasureAsync("3-node cluster: follower GetAsync (stale)", async (key, _) =>
                _ = await follower.GetAsync(key, ReadConsistency.Stale) ?? throw new InvalidOperationException("A written key is missing."));
        }
        finally
        {
            foreach (ReplicatedKvNode node in nodes)
            {
                await node.DisposeAsync();
            }
        }
    }

    /// <summary>Runs -num operations over -threads clients; prints ops/s and the merged histogram.</summary>
    private async Task MeasureAsync(string name, Func<byte[], byte[], Task> operation)
    {
        long perThread = Math.Max(1, flags.Num / _threads);
        var histograms = new Histogram[_threads];
        var clock = Stopwatch.StartNew();
        await Task.WhenAll(Enumerable.Range(0, _threads).Select(t => Task.Run(async () =>
        {
            var histogram = histograms[t] = new Histogram();
            byte[] value = new byte[flags.ValueSize];
            new Random(t).NextBytes(value);
            for (long i = 0; i < perThread; i++)
            {
                byte[] key = System.Text.Encoding.ASCII.GetBytes((t * perThread + i).ToString("D16", CultureInfo.InvariantCulture));
                long start = Stopwatch.GetTimestamp();
                await operation(key, value);
                histogram.Add(Stopwatch.GetElapsedTime(start).TotalMicroseconds);
            }
        })));
        double seconds = clock.Elapsed.TotalSeconds;
        var all = new Histogram();
        foreach (Histogram h in histograms)
        {
            all.Merge(h);
        }
        long ops = perThread * _threads;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{name,-55}: {ops / seconds,10:F0} ops/s ({ops} ops in {seconds:F2} s)"));
        Console.Write(all.Format());
    }

    private static async Task<T> WaitAsync<T>(Func<T?> probe)
        where T : class
    {
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed < TimeSpan.FromSeconds(30))
        {
            if (probe() is { } value)
            {
                return value;
            }
            await Task.Delay(10);
        }
        throw new TimeoutException("The cluster did not reach the expected state within 30 s.");
    }

    private static IPEndPoint[] FreeEndPoints(int count)
    {
        var listeners = Enumerable.Range(0, count).Select(_ => new TcpListener(IPAddress.Loopback, 0)).ToArray();
        foreach (TcpListener l in listeners)
        {
            l.Start();
        }
        IPEndPoint[] endPoints = [.. listeners.Select(l => (IPEndPoint)l.LocalEndpoint)];
        foreach (TcpListener l in listeners)
        {
            l.Stop();
        }
        return endPoints;
    }
}
