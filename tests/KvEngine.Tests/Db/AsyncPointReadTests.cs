using System.Buffers;
using System.Text;
using KvEngine.Storage.IO;
using KvEngine.Tests.Storage.IO;
using KvEngine.Tests.Util;

namespace KvEngine.Tests.Db;

/// <summary>
/// GetAsync, TryGetAsync and MultiGetAsync (DbImpl.ReadAsync.cs): the same answers as the
/// synchronous reads over tables across levels; a block that is not cached is read by the engine
/// while the call is suspended (held reads prove it, with no timing); cancellation and Dispose
/// while a read is held; a cached lookup completes synchronously without allocating; a batch
/// submits one engine batch per round.
/// </summary>
public sealed class AsyncPointReadTests : IDisposable
{
    private const int KeyCount = 4000;

    // Under /tmp (ext4 here, not tmpfs): O_DIRECT works.
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-async-point-");

    public void Dispose() => _dir.Delete(recursive: true);

    private static byte[] Key(int i) => Encoding.ASCII.GetBytes($"key{i:D6}");

    private static byte[] Value(int i, int generation)
    {
        var v = new byte[10 + (i * 37 + generation * 11) % 300];
        new Random(i * 31 + generation).NextBytes(v);
        return v;
    }

    /// <summary>
    /// Writes the data set: every key in a table compacted to the bottom level, a third
    /// overwritten and a seventh deleted in a level-0 table, some merged... and a few in the
    /// memtable; then reopens (so no block is cached) with <paramref name="engine"/>.
    /// </summary>
    private KvDb Build(string name, KvOptions options, IBlockReadEngine engine)
    {
        string path = Path.Combine(_dir.FullName, name);
        options.DisableAutoCompactions = true;
        options.WriteBufferSize = 64 << 10;
        using (KvDb db = KvDb.Open(path, options))
        {
            for (int i = 0; i < KeyCount; i++)
            {
                db.Put(Key(i), Value(i, 0));
            }
            db.Flush();
            db.CompactRange(null, null);
            for (int i = 0; i < KeyCount; i += 3)
            {
                db.Put(Key(i), Value(i, 1));
            }
            for (int i = 0; i < KeyCount; i += 7)
            {
                db.Delete(Key(i));
            }
            db.Flush();
        }
        options.BlockReadEngine = engine;
        KvDb reopened = KvDb.Open(path, options);
        for (int i = 5; i < KeyCount; i += 101)
        {
            reopened.Put(Key(i), Value(i, 2)); // memtable
        }
        return reopened;
    }

    private static KvOptions Options(string cache, bool partitioned, bool direct) => new()
    {
        BlockCache = cache switch
        {
            "tiny" => new KvBlockCache(1, numShardBits: 0, strictCapacity: true), // every insert fails
            _ => new KvBlockCache(8 << 20),
        },
        IndexType = partitioned ? KvIndexType.TwoLevelIndexSearch : KvIndexType.BinarySearch,
        PartitionFilters = partitioned,
        MetadataBlockSize = 512,
        CacheIndexAndFilterBlocks = partitioned,
        UseDirectReads = direct,
    };

    /// <summary>
    /// Every key (and absent ones) read cold through GetAsync, TryGetAsync and MultiGetAsync: the
    /// synchronous Get's answer; the engine did the table reads.
    /// </summary>
    [Theory]
    [AsyncReadCases("io_uring")]
    [AsyncReadCases("threadpool")]
    public async Task AsyncReadsEqualSyncReads(string engineKind, string cache, bool partitioned, bool direct)
    {
        var engine = new HoldingBlockReadEngine(BlockReadTestFiles.Create(engineKind));
        using KvDb db = Build($"db-{engineKind}-{cache}-{partitioned}-{direct}", Options(cache, partitioned, direct), engine);
        var read = new ReadOptions { FillCache = cache != "nofill" };
        var writer = new ArrayBufferWriter<byte>();
        var batch = new List<byte[]>();
        using var results = new MultiGetResults();
        for (int i = 0; i < KeyCount + 50; i += 3)
        {
            byte[] key = i < KeyCount ? Key(i) : Key(i * 1000 + 1); // past the end: absent
            byte[]? expected = db.Get(key, new ReadOptions { FillCache = false });
            Assert.Equal(expected, await db.GetAsync(key, read));
            writer.ResetWrittenCount();
            Assert.Equal(expected != null, await db.TryGetAsync(key, writer, read));
            Assert.Equal(expected ?? [], writer.WrittenSpan.ToArray());
            batch.Add(i % 2 == 0 ? key : Key(KeyCount - 1 - i % KeyCount));
        }
        for (int start = 0; start < batch.Count; start += 32)
        {
            List<byte[]> keys = batch.GetRange(start, Math.Min(32, batch.Count - start));
            byte[]?[] values = await db.MultiGetAsync(keys, read);
            var memories = keys.Select(k => (ReadOnlyMemory<byte>)k).ToArray();
            await db.MultiGetAsync(memories, results, read);
            for (int k = 0; k < keys.Count; k++)
            {
                byte[]? expected = db.Get(keys[k], new ReadOptions { FillCache = false });
                Assert.Equal(expected, values[k]);
                Assert.Equal(expected, results.ToArray(k));
            }
        }
        Assert.True(engine.Reads > 0, "the table reads went through the engine");
        Assert.Equal(0, engine.SingleReads);
    }

    /// <summary>A lookup that needs an uncached block is pending while the engine holds its read, and completes with the value after.</summary>
    [Theory]
    [EngineData("io_uring")]
    [EngineData("threadpool")]
    public async Task ColdLookupSuspendsUntilTheReadCompletes(string engineKind)
    {
        var engine = new HoldingBlockReadEngine(BlockReadTestFiles.Create(engineKind)) { Holding = true };
        using KvDb db = Build("db", Options("on", partitioned: false, direct: false), engine);
        var writer = new ArrayBufferWriter<byte>();
        ValueTask<bool> pending = db.TryGetAsync(Key(1), writer);
        ValueTask<byte[]?> pendingGet = db.GetAsync(Key(2));
        Assert.False(pending.IsCompleted); // a synchronous read would have completed it
        Assert.False(pendingGet.IsCompleted);
        Assert.True(engine.FirstHeld.IsCompleted); // the read was submitted before the call returned
        Assert.Equal(0, writer.WrittenCount);
        engine.Release();
        Assert.True(await pending);
        Assert.Equal(Value(1, 0), writer.WrittenSpan.ToArray());
        Assert.Equal(Value(2, 0), await pendingGet);
        // Now cached: completes synchronously, no further engine read.
        int reads = engine.Reads;
        writer.ResetWrittenCount();
        ValueTask<bool> warm = db.TryGetAsync(Key(1), writer);
        Assert.True(warm.IsCompletedSuccessfully);
        Assert.True(await warm);
        Assert.Equal(reads, engine.Reads);
    }

    /// <summary>A token cancelled while the read is held ends the call with OperationCanceledException; the database stays usable.</summary>
    [Theory]
    [EngineData("io_uring")]
    [EngineData("threadpool")]
    public async Task CancellationWhileReadIsHeld(string engineKind)
    {
        var engine = new HoldingBlockReadEngine(BlockReadTestFiles.Create(engineKind)) { Holding = true };
        KvDb db = Build("db", Options("on", partitioned: false, direct: false), engine);
        using var cts = new CancellationTokenSource();
        ValueTask<bool> pending = db.TryGetAsync(Key(1), new ArrayBufferWriter<byte>(), null, cts.Token);
        ValueTask pendingBatch = db.MultiGetAsync(new ReadOnlyMemory<byte>[] { Key(100), Key(2000) }, new MultiGetResults(), null, cts.Token);
        Assert.False(pending.IsCompleted);
        Assert.False(pendingBatch.IsCompleted);
        Assert.True(engine.FirstHeld.IsCompleted);
        cts.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await pending);
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await pendingBatch);
        engine.Release();
        Assert.Equal(Value(1, 0), await db.GetAsync(Key(1)));
        Assert.Equal(Value(1, 0), db.Get(Key(1)));
        db.Dispose(); // no read state left pinned by the cancelled calls
    }

    /// <summary>Dispose while reads are held: they end with ObjectDisposedException once released, touching nothing freed.</summary>
    [Theory]
    [EngineData("io_uring")]
    [EngineData("threadpool")]
    public async Task DisposeWhileReadIsHeld(string engineKind)
    {
        var engine = new HoldingBlockReadEngine(BlockReadTestFiles.Create(engineKind)) { Holding = true };
        KvDb db = Build("db", Options("on", partitioned: true, direct: true), engine);
        ValueTask<byte[]?> pending = db.GetAsync(Key(1));
        ValueTask pendingBatch = db.MultiGetAsync(new ReadOnlyMemory<byte>[] { Key(100), Key(2000), Key(3999) }, new MultiGetResults());
        Assert.False(pending.IsCompleted);
        Assert.False(pendingBatch.IsCompleted);
        Assert.True(engine.FirstHeld.IsCompleted);
        db.Dispose();
        Assert.False(pending.IsCompleted);
        engine.Release();
        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await pending);
        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await pendingBatch);
        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await db.GetAsync(Key(1)));
    }

    /// <summary>With every block cached, TryGetAsync and MultiGetAsync complete synchronously and allocate nothing; so does the synchronous Get path they share.</summary>
    [Fact]
    public void CachedLookupsCompleteSynchronouslyWithoutAllocating()
    {
        var engine = new HoldingBlockReadEngine(BlockReadTestFiles.Create("threadpool"));
        using KvDb db = Build("db", Options("on", partitioned: true, direct: false), engine);
        ReadOnlyMemory<byte>[] keys = [Key(1), Key(2), Key(5), Key(1000), Key(3998), Key(KeyCount * 1000 + 1)];
        var writer = new ArrayBufferWriter<byte>(4096);
        using var results = new MultiGetResults();
        foreach (ReadOnlyMemory<byte> k in keys)
        {
            db.Get(k.Span); // warms the cache
        }
        int reads = engine.Reads;
        ReadOnlyMemory<byte> key = keys[0];
        AllocationAssert.Zero(() =>
        {
            writer.ResetWrittenCount();
            ValueTask<bool> t = db.TryGetAsync(key, writer);
            if (!t.IsCompletedSuccessfully || !t.Result)
            {
                throw new InvalidOperationException("TryGetAsync did not complete synchronously with the value");
            }
        }, "TryGetAsync, cached");
        AllocationAssert.Zero(() =>
        {
            ValueTask t = db.MultiGetAsync(keys, results);
            if (!t.IsCompletedSuccessfully)
            {
                throw new InvalidOperationException("MultiGetAsync did not complete synchronously");
            }
            t.GetAwaiter().GetResult();
        }, "MultiGetAsync, cached");
        Assert.Equal(reads, engine.Reads);
        Assert.Equal(Value(1, 0), results.ToArray(0));
        Assert.Null(results.ToArray(5));
    }

    /// <summary>
    /// A cold batch over one table: every key's data block goes to the engine in one batch (one
    /// round); with partitioned metadata in the cache, one batch per round, each with many reads.
    /// </summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task MultiGetAsyncSubmitsOneBatchPerRound(bool partitioned)
    {
        var engine = new HoldingBlockReadEngine(BlockReadTestFiles.Create("threadpool"));
        using KvDb db = Build("db", Options("on", partitioned, direct: false), engine);
        var keys = new ReadOnlyMemory<byte>[32];
        for (int i = 0; i < keys.Length; i++)
        {
            keys[i] = Key(1 + i * 120); // a different data block each (about 25 entries per block)
        }
        using var results = new MultiGetResults();
        await db.MultiGetAsync(keys, results);
        Assert.Equal(0, engine.SingleReads);
        if (!partitioned)
        {
            // Index and filter are the readers' own: round 1 reads every key's data block (a few
            // keys share one, a few are in the memtable) in one batch.
            Assert.Equal(1, engine.Batches);
            Assert.True(engine.Reads >= 24, $"{engine.Reads} reads in the batch");
        }
        else
        {
            // Top-level filter index, filter partitions, top-level index, index partitions, data blocks.
            Assert.InRange(engine.Batches, 2, 12);
            Assert.True(engine.Reads >= 4 * engine.Batches, $"{engine.Reads} reads in {engine.Batches} batches");
        }
        for (int i = 0; i < keys.Length; i++)
        {
            Assert.Equal(db.Get(keys[i].Span), results.ToArray(i));
        }
    }
}
