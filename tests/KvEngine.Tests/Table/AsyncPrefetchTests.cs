using System.Buffers;
using System.Runtime.InteropServices;
using System.Text;
using KvEngine.Storage.IO;
using KvEngine.Table;
using KvEngine.Tests.Db;
using KvEngine.Tests.Storage;
using KvEngine.Tests.Storage.IO;

namespace KvEngine.Tests.Table;

/// <summary>
/// <see cref="ReadOptions.AsyncIO"/> iterators: the same entries as the synchronous iterator over
/// many tables on several levels (forward, backward, seeks, bounds; buffered and direct reads; each
/// I/O engine), the next range read asynchronously ahead of the cursor and consumed without a
/// second read (waiting for a read still in flight), and an iterator disposed with a read in
/// flight that leaves the buffer to it.
/// </summary>
public sealed class AsyncPrefetchTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-asyncio-"); // ext4 here: O_DIRECT works

    public void Dispose() => _dir.Delete(recursive: true);

    private static byte[] Key(int i) => Encoding.ASCII.GetBytes($"key{i:D7}");

    [Theory]
    [EngineData("io_uring")]
    [EngineData("threadpool")]
    public void AnAsyncIOIteratorReadsExactlyWhatTheSynchronousOneDoes(string kind)
    {
        using IBlockReadEngine engine = BlockReadTestFiles.Create(kind);
        foreach (bool direct in new[] { false, true })
        {
            string path = Path.Combine(_dir.FullName, "db-" + direct);
            var fs = new CountingFileSystem(engine);
            using KvDb db = KvDb.Open(path, ManyTablesOptions(fs, direct));
            FillManyTables(db, seed: direct ? 7 : 3);
            Assert.NotEqual("0", db.GetProperty("rocksdb.num-files-at-level0"));
            Assert.True(Enumerable.Range(1, 6).Sum(l => int.Parse(db.GetProperty($"rocksdb.num-files-at-level{l}")!, System.Globalization.CultureInfo.InvariantCulture)) > 1);

            using Snapshot snapshot = db.GetSnapshot();
            var rng = new Random(11);
            for (int round = 0; round < 6; round++)
            {
                byte[]? lower = round % 3 == 1 ? Key(rng.Next(5_000)) : null;
                byte[]? upper = round % 3 == 2 ? Key(5_000 + rng.Next(5_000)) : null;
                var sync = new ReadOptions { Snapshot = snapshot, IterateLowerBound = lower, IterateUpperBound = upper, FillCache = round % 2 == 0 };
                var async = new ReadOptions { Snapshot = snapshot, IterateLowerBound = lower, IterateUpperBound = upper, FillCache = round % 2 == 0, AsyncIO = true };
                using KvIterator expected = db.NewIterator(sync);
                using KvIterator actual = db.NewIterator(async);
                expected.SeekToFirst();
                actual.SeekToFirst();
                AssertSameWalk(expected, actual, forward: true, steps: int.MaxValue);
                expected.SeekToLast();
                actual.SeekToLast();
                AssertSameWalk(expected, actual, forward: false, steps: int.MaxValue);
                for (int seek = 0; seek < 20; seek++)
                {
                    byte[] target = Key(rng.Next(10_000));
                    expected.Seek(target);
                    actual.Seek(target);
                    AssertSameWalk(expected, actual, forward: true, steps: 300);
                    expected.SeekForPrev(target);
                    actual.SeekForPrev(target);
                    AssertSameWalk(expected, actual, forward: false, steps: 300);
                }
            }
            Assert.NotEmpty(fs.AsyncReads); // the ranges ahead were read asynchronously
            Assert.All(fs.AsyncReads, r => Assert.Equal(direct, r.Direct));
            if (direct)
            {
                Assert.All(fs.AsyncReads, r => Assert.True(r.Offset % 4096 == 0 && r.Length % 4096 == 0, $"unaligned direct read {r.Offset}+{r.Length}"));
            }
        }
    }

    [Fact]
    public void TheRangeAheadIsReadAsynchronouslyAndTheCursorTakesItWithoutReadingAgain()
    {
        var fs = new CountingFileSystem();
        string path = Path.Combine(_dir.FullName, "one");
        using KvDb db = KvDb.Open(path, OneTableOptions(fs));
        var model = FillOneTable(db);
        fs.Reads.Clear();

        using (KvIterator it = db.NewIterator(new ReadOptions { AsyncIO = true }))
        {
            AssertWalksModel(it, model);
        }
        var asyncReads = fs.AsyncReads.ToList();
        Assert.True(asyncReads.Count >= 3, $"{asyncReads.Count} asynchronous reads");
        AssertNoSynchronousReadOverlaps(fs, asyncReads);
        // Each asynchronous range starts where the one before (or the synchronous readahead) ended: ahead of the cursor, in file order.
        for (int i = 1; i < asyncReads.Count; i++)
        {
            Assert.Equal(asyncReads[i - 1].Offset + asyncReads[i - 1].Length, asyncReads[i].Offset);
        }
    }

    [Fact]
    public void ACursorReachingARangeStillInFlightWaitsForItInsteadOfReadingAgain()
    {
        var fs = new CountingFileSystem();
        string path = Path.Combine(_dir.FullName, "wait");
        using KvDb db = KvDb.Open(path, OneTableOptions(fs));
        var model = FillOneTable(db);
        fs.Reads.Clear();

        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        int held = 0;
        fs.BeforeAsyncRead = r => Interlocked.Increment(ref held) == 1 ? gate.Task : Task.CompletedTask; // hold the first range
        int waits = 0;
        PrefetchSlot.WaitingForReadHook = () =>
        {
            waits++;
            gate.TrySetResult(); // the cursor needs the held range now: let it complete
        };
        try
        {
            using KvIterator it = db.NewIterator(new ReadOptions { AsyncIO = true });
            AssertWalksModel(it, model);
        }
        finally
        {
            PrefetchSlot.WaitingForReadHook = null;
        }
        Assert.True(waits >= 1, "the cursor never waited for the held range");
        Assert.True(gate.Task.IsCompleted);
        AssertNoSynchronousReadOverlaps(fs, fs.AsyncReads.ToList());
    }

    [Fact]
    public async Task DisposingAnIteratorWithAReadInFlightCancelsItAndLeavesItsBufferToIt()
    {
        var fs = new CountingFileSystem();
        string path = Path.Combine(_dir.FullName, "dispose");
        using KvDb db = KvDb.Open(path, OneTableOptions(fs));
        var model = FillOneTable(db);

        // The first asynchronous read is held; when released it writes garbage into its destination
        // and then fails, as a read the kernel finished after the cancellation was asked may.
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var scribbled = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        HeldRead? first = null;
        fs.BeforeAsyncRead = async r =>
        {
            if (Interlocked.CompareExchange(ref first, r, null) != null)
            {
                return;
            }
            await gate.Task;
            r.Destination.Span.Fill(0xEE);
            scribbled.SetResult();
            throw new OperationCanceledException(r.CancellationToken);
        };

        KvIterator it = db.NewIterator(new ReadOptions { AsyncIO = true });
        it.SeekToFirst();
        while (first == null && it.Valid)
        {
            it.Next();
        }
        Assert.NotNull(first);
        Assert.False(first.CancellationToken.IsCancellationRequested);
        it.Dispose(); // returns at once: the read stays in flight
        Assert.True(first.CancellationToken.IsCancellationRequested);
        // The held read's buffer did not go back to the pool: renting its size here does not return it.
        Assert.True(MemoryMarshal.TryGetArray<byte>(first.Destination, out ArraySegment<byte> held));
        byte[] rented = ArrayPool<byte>.Shared.Rent(held.Array!.Length);
        Assert.NotSame(held.Array, rented);
        ArrayPool<byte>.Shared.Return(rented);

        // A new iterator on this thread reuses the pooled table iterator: its first prefetch is
        // read (and completes) while the abandoned read still holds its buffer; then the abandoned
        // read scribbles. Had the buffer gone back to the pool at Dispose, the new prefetch would
        // have it and the cursor would meet the garbage.
        var secondDone = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        fs.AfterAsyncRead = r =>
        {
            if (!ReferenceEquals(r, first))
            {
                secondDone.TrySetResult();
            }
        };
        using KvIterator again = db.NewIterator(new ReadOptions { AsyncIO = true });
        again.SeekToFirst();
        using var expected = model.GetEnumerator();
        while (fs.AsyncReads.Count < 2)
        {
            Assert.True(expected.MoveNext());
            Assert.True(again.Valid);
            Assert.Equal(expected.Current.Key, again.Key.ToArray());
            again.Next();
        }
        await secondDone.Task;
        gate.SetResult();
        await scribbled.Task;
        for (; expected.MoveNext(); again.Next())
        {
            Assert.True(again.Valid);
            Assert.Equal(expected.Current.Key, again.Key.ToArray());
            Assert.Equal(expected.Current.Value, again.Value.ToArray());
        }
        Assert.False(again.Valid);
    }

    internal static KvOptions ManyTablesOptions(CountingFileSystem fs, bool direct) => new()
    {
        FileSystem = fs,
        UseDirectReads = direct,
        WriteBufferSize = 64 << 10,
        TargetFileSizeBase = 96 << 10,
        MaxBytesForLevelBase = 256 << 10,
        Level0FileNumCompactionTrigger = 4,
        BlockSize = 1024,
        BlockCache = new KvBlockCache(64 << 10),
    };

    /// <summary>Random puts and deletes over 10,000 keys, compacted to several levels, then a few level-0 tables on top.</summary>
    internal static void FillManyTables(KvDb db, int seed)
    {
        var rng = new Random(seed);
        for (int i = 0; i < 30_000; i++)
        {
            byte[] key = Key(rng.Next(10_000));
            if (rng.Next(8) == 0)
            {
                db.Delete(key);
            }
            else
            {
                var value = new byte[rng.Next(1, 200)];
                rng.NextBytes(value);
                db.Put(key, value);
            }
        }
        db.Flush();
        db.CompactRange(null, null);
        for (int t = 0; t < 3; t++)
        {
            for (int i = 0; i < 500; i++)
            {
                db.Put(Key(rng.Next(10_000)), [(byte)t, (byte)i]);
            }
            db.Flush();
        }
    }

    private static KvOptions OneTableOptions(CountingFileSystem fs) => new()
    {
        FileSystem = fs,
        DisableAutoCompactions = true,
        BlockSize = 4096,
        WriteBufferSize = 64 << 20,
    };

    /// <summary>One table of about 2 MiB, not yet in the block cache: every block comes from the file.</summary>
    private static SortedDictionary<byte[], byte[]> FillOneTable(KvDb db)
    {
        var model = new SortedDictionary<byte[], byte[]>(ByteArrayComparer.Instance);
        var rng = new Random(5);
        for (int i = 0; i < 16_000; i++)
        {
            var value = new byte[120];
            rng.NextBytes(value);
            db.Put(Key(i), value);
            model[Key(i)] = value;
        }
        db.Flush();
        return model;
    }

    private static void AssertWalksModel(KvIterator it, SortedDictionary<byte[], byte[]> model)
    {
        it.SeekToFirst();
        foreach (KeyValuePair<byte[], byte[]> e in model)
        {
            Assert.True(it.Valid);
            Assert.Equal(e.Key, it.Key.ToArray());
            Assert.Equal(e.Value, it.Value.ToArray());
            it.Next();
        }
        Assert.False(it.Valid);
    }

    /// <summary>No block was read synchronously from a range an asynchronous read covered: the cursor took those blocks from the prefetch.</summary>
    private static void AssertNoSynchronousReadOverlaps(CountingFileSystem fs, List<(string Path, long Offset, int Length, bool Direct)> asyncReads)
    {
        foreach (var s in fs.ReadsOf(".sst"))
        {
            foreach (var a in asyncReads)
            {
                bool overlaps = a.Path == s.Path && s.Offset < a.Offset + a.Length && a.Offset < s.Offset + s.Length;
                Assert.False(overlaps, $"synchronous read {s.Offset}+{s.Length} overlaps asynchronous read {a.Offset}+{a.Length}");
            }
        }
    }

    private static void AssertSameWalk(KvIterator expected, KvIterator actual, bool forward, int steps)
    {
        for (int i = 0; i < steps && expected.Valid; i++)
        {
            Assert.True(actual.Valid);
            Assert.True(expected.Key.SequenceEqual(actual.Key));
            Assert.True(expected.Value.SequenceEqual(actual.Value));
            if (forward)
            {
                expected.Next();
                actual.Next();
            }
            else
            {
                expected.Prev();
                actual.Prev();
            }
        }
        Assert.Equal(expected.Valid, actual.Valid);
    }
}
