using System.Text;
using KvEngine.Storage.IO;
using KvEngine.Tests.Storage;
using KvEngine.Tests.Storage.IO;
using KvEngine.Tests.Table;

namespace KvEngine.Tests.Db;

/// <summary>
/// <see cref="KvDb.ScanAsync"/> reads data blocks with awaits: it suspends on a block not in memory
/// (the enumerator's MoveNextAsync is not complete while the read is held), honours cancellation
/// while it waits, returns exactly what a synchronous iterator returns over many tables (each I/O
/// engine, buffered and direct reads, with and without room in the block cache), and ends even when
/// one step must pass more blocks than the scan keeps.
/// </summary>
public sealed class ScanAsyncTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-scanasync-");

    public void Dispose() => _dir.Delete(recursive: true);

    private static byte[] Key(int i) => Encoding.ASCII.GetBytes($"key{i:D7}");

    [Fact]
    public async Task AScanSuspendsOnAColdBlockUntilItsReadCompletes()
    {
        var fs = new CountingFileSystem();
        using KvDb db = KvDb.Open(Path.Combine(_dir.FullName, "cold"), new KvOptions { FileSystem = fs, DisableAutoCompactions = true });
        for (int i = 0; i < 1000; i++)
        {
            db.Put(Key(i), Encoding.ASCII.GetBytes("v" + i));
        }
        db.Flush(); // the memtable is empty: every key comes from a table whose blocks are not cached
        fs.Reads.Clear();

        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        fs.BeforeAsyncRead = _ => gate.Task;
        await using IAsyncEnumerator<KeyValuePair<byte[], byte[]>> e = db.ScanAsync(Key(0), default).GetAsyncEnumerator();
        ValueTask<bool> first = e.MoveNextAsync();
        Assert.False(first.IsCompleted); // waiting for the device, not blocking a thread
        Assert.Single(fs.AsyncReads);
        Assert.Empty(fs.ReadsOf(".sst")); // and no synchronous read of a data block

        gate.SetResult();
        Assert.True(await first);
        Assert.Equal(Key(0), e.Current.Key);
        int n = 1;
        while (await e.MoveNextAsync())
        {
            Assert.Equal(Key(n), e.Current.Key);
            Assert.Equal(Encoding.ASCII.GetBytes("v" + n), e.Current.Value);
            n++;
        }
        Assert.Equal(1000, n);
        Assert.Empty(fs.ReadsOf(".sst"));
    }

    [Fact]
    public async Task CancellingWhileTheReadIsHeldEndsTheScanWithOperationCanceled()
    {
        var fs = new CountingFileSystem();
        using KvDb db = KvDb.Open(Path.Combine(_dir.FullName, "cancel"), new KvOptions { FileSystem = fs, DisableAutoCompactions = true });
        for (int i = 0; i < 100; i++)
        {
            db.Put(Key(i), [1]);
        }
        db.Flush();

        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        CancellationToken seen = default;
        fs.BeforeAsyncRead = r =>
        {
            seen = r.CancellationToken;
            return gate.Task.WaitAsync(r.CancellationToken); // a held read that honours its token, as the engine does
        };
        using var cts = new CancellationTokenSource();
        await using IAsyncEnumerator<KeyValuePair<byte[], byte[]>> e = db.ScanAsync(Key(0), default, cancellationToken: cts.Token).GetAsyncEnumerator();
        ValueTask<bool> first = e.MoveNextAsync();
        Assert.False(first.IsCompleted);
        Assert.True(seen.CanBeCanceled); // the scan's token reached the read
        cts.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await first);
    }

    [Theory]
    [EngineData("io_uring")]
    [EngineData("threadpool")]
    public async Task AScanReturnsWhatTheSynchronousIteratorReturns(string kind)
    {
        using IBlockReadEngine engine = BlockReadTestFiles.Create(kind);
        foreach (bool direct in new[] { false, true })
        {
            var fs = new CountingFileSystem(engine);
            KvOptions options = AsyncPrefetchTests.ManyTablesOptions(fs, direct);
            if (!direct)
            {
                options.BlockCache = null; // the database's own 8 MiB cache: fetched blocks go into it
            }
            using KvDb db = KvDb.Open(Path.Combine(_dir.FullName, "scan-" + direct), options);
            AsyncPrefetchTests.FillManyTables(db, seed: 21);
            var rng = new Random(4);
            for (int round = 0; round < 4; round++)
            {
                byte[] from = round == 0 ? [] : Key(rng.Next(10_000));
                byte[] to = round == 0 ? [] : Key(rng.Next(10_000));
                // The scan first, while the blocks are not cached yet.
                var actual = new List<KeyValuePair<byte[], byte[]>>();
                await foreach (KeyValuePair<byte[], byte[]> kv in db.ScanAsync(from, to))
                {
                    actual.Add(kv);
                }
                var expected = new List<KeyValuePair<byte[], byte[]>>();
                using (KvIterator it = db.NewIterator(new ReadOptions { IterateLowerBound = from, IterateUpperBound = to.Length == 0 ? null : to }))
                {
                    for (it.Seek(from); it.Valid; it.Next())
                    {
                        expected.Add(new(it.Key.ToArray(), it.Value.ToArray()));
                    }
                }
                Assert.Equal(expected.Count, actual.Count);
                for (int i = 0; i < expected.Count; i++)
                {
                    Assert.Equal(expected[i].Key, actual[i].Key);
                    Assert.Equal(expected[i].Value, actual[i].Value);
                }
            }
            Assert.NotEmpty(fs.AsyncReads);
            if (direct)
            {
                Assert.All(fs.AsyncReads, r => Assert.True(r.Offset % 4096 == 0 && r.Length % 4096 == 0, $"unaligned direct read {r.Offset}+{r.Length}"));
            }
        }
    }

    [Fact]
    public async Task AStepPastMoreBlocksThanTheScanKeepsStillEnds()
    {
        // Two tables walked in turn through thousands of deleted keys: one Next passes far more
        // blocks than the scan keeps, with no block cache to hold them either.
        var fs = new CountingFileSystem();
        var options = new KvOptions { FileSystem = fs, DisableAutoCompactions = true, BlockSize = 512, BlockCache = new KvBlockCache(0) };
        using KvDb db = KvDb.Open(Path.Combine(_dir.FullName, "tombstones"), options);
        for (int i = 0; i < 4000; i++)
        {
            db.Put(Key(i), new byte[100]);
        }
        db.Flush();
        for (int i = 1; i < 3999; i++)
        {
            db.Delete(Key(i));
        }
        db.Flush();
        var keys = new List<byte[]>();
        await foreach (KeyValuePair<byte[], byte[]> kv in db.ScanAsync(Key(0), default))
        {
            keys.Add(kv.Key);
        }
        Assert.Equal([Key(0), Key(3999)], keys);
    }
}
