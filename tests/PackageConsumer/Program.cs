// Put/Get with LZ4 through the KvEngine package: writes enough compressible values to fill
// several data blocks, flushes them into an LZ4 table, reopens the database and reads every value
// back; then an IDistributedCache from the KvEngine.Extensions.Caching package, across a reopen;
// then a one-member Raft cluster from the KvEngine.Replication package: a replicated write read
// back linearizably.
// Exits 0 on success, 1 with a message on the first mismatch.
// Usage: PackageConsumer <expected KvEngine package version>
using System.Net;
using System.Net.Sockets;
using System.Reflection;
using System.Text;
using KvEngine;
using KvEngine.Extensions.Caching;
using KvEngine.Replication;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Options;

string expectedVersion = args.Length > 0 ? args[0] : throw new ArgumentException("usage: PackageConsumer <expected-version>");
string? informational = typeof(KvDb).Assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion;
// The informational version is "<version>+<commit>" when built from git.
if (informational == null || informational.Split('+')[0] != expectedVersion)
{
    Console.Error.WriteLine($"FAIL: loaded KvEngine {informational ?? "(no version)"}, expected {expectedVersion}");
    return 1;
}

string dir = Path.Combine(Path.GetTempPath(), "kvengine-consumer-" + Guid.NewGuid().ToString("N"));
const int Count = 2000;
try
{
    var options = new KvOptions { Compression = KvCompressionType.Lz4 };
    using (KvDb db = KvDb.Open(dir, options))
    {
        for (int i = 0; i < Count; i++)
        {
            db.Put(Key(i), Value(i));
        }
        db.Flush(); // the values now live in an LZ4-compressed table file
        byte[]? first = db.Get(Key(0));
        if (first == null || !first.AsSpan().SequenceEqual(Value(0)))
        {
            Console.Error.WriteLine("FAIL: key 0 not read back after the flush");
            return 1;
        }
    }

    long tableBytes = Directory.GetFiles(dir, "*.sst").Sum(f => new FileInfo(f).Length);
    long rawBytes = (long)Count * Value(0).Length;
    if (tableBytes == 0 || tableBytes >= rawBytes)
    {
        Console.Error.WriteLine($"FAIL: the tables hold {tableBytes} bytes for {rawBytes} bytes of compressible values: not compressed");
        return 1;
    }

    using (KvDb db = KvDb.Open(dir, new KvOptions { Compression = KvCompressionType.Lz4, CreateIfMissing = false }))
    {
        for (int i = 0; i < Count; i++)
        {
            byte[]? v = db.Get(Key(i));
            if (v == null || !v.AsSpan().SequenceEqual(Value(i)))
            {
                Console.Error.WriteLine($"FAIL: key {i} read back as {(v == null ? "missing" : Encoding.UTF8.GetString(v))}");
                return 1;
            }
        }
        if (db.Get("absent"u8) != null)
        {
            Console.Error.WriteLine("FAIL: a key never written was found");
            return 1;
        }
    }
    string cacheDir = Path.Combine(dir, "cache");
    var cacheOptions = Options.Create(new KvEngineCacheOptions { Path = cacheDir });
    using (var cache = new KvEngineCache(cacheOptions))
    {
        cache.SetString("greeting", "hello from the package", new DistributedCacheEntryOptions { SlidingExpiration = TimeSpan.FromHours(1) });
    }
    using (var cache = new KvEngineCache(cacheOptions))
    {
        string? greeting = cache.GetString("greeting");
        if (greeting != "hello from the package")
        {
            Console.Error.WriteLine($"FAIL: KvEngineCache read back {greeting ?? "nothing"} after a reopen");
            return 1;
        }
    }
    // A one-member cluster elects itself: a replicated write, then a linearizable read.
    int port;
    using (var probe = new TcpListener(IPAddress.Loopback, 0))
    {
        probe.Start();
        port = ((IPEndPoint)probe.LocalEndpoint).Port;
    }
    var endPoint = new IPEndPoint(IPAddress.Loopback, port);
    var nodeOptions = new ReplicatedKvNodeOptions { LocalEndPoint = endPoint, DataDirectory = Path.Combine(dir, "node") };
    nodeOptions.Members.Add(endPoint);
    await using (ReplicatedKvNode node = await ReplicatedKvNode.StartAsync(nodeOptions))
    {
        await node.WaitForLeaderAsync(TimeSpan.FromSeconds(30));
        using var batch = new WriteBatch();
        batch.Put("replicated"u8, "yes"u8);
        await node.WriteAsync(batch);
        byte[]? replicated = await node.GetAsync("replicated"u8.ToArray(), ReadConsistency.Linearizable);
        if (replicated == null || Encoding.UTF8.GetString(replicated) != "yes")
        {
            Console.Error.WriteLine("FAIL: the replicated write was not read back");
            return 1;
        }
    }
    Console.WriteLine($"package consumer: KvEngine {informational} put/get {Count} keys with LZ4 ({tableBytes} table bytes for {rawBytes} value bytes), KvEngineCache across a reopen, a one-node Raft write: OK");
    return 0;
}
finally
{
    if (Directory.Exists(dir))
    {
        Directory.Delete(dir, recursive: true);
    }
}

static byte[] Key(int i) => Encoding.UTF8.GetBytes($"key:{i:D6}");

static byte[] Value(int i) => Encoding.UTF8.GetBytes(string.Concat(Enumerable.Repeat($"value of key {i:D6}; ", 10)));
