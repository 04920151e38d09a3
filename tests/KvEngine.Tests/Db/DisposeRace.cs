using System.Buffers;
using System.Collections.Concurrent;
using System.Globalization;
using System.Text;

namespace KvEngine.Tests.Db;

/// <summary>
/// One trial of <see cref="DisposeRaceTests"/>: a database on disk (memory-mapped WAL, small write
/// buffer, so memtable switches and flushes happen during the trial) is disposed while worker
/// threads call every public operation on it, and on an iterator and a snapshot taken before.
/// Files are local (<see cref="NoSyncFileSystem"/>: fsyncs skipped, to keep a trial short).
/// Every call must return normally or throw <see cref="ObjectDisposedException"/> (or
/// <see cref="KvException"/>, which the API documents for a write or flush failing because the
/// database stopped), a value read must be one that was written, and every worker must end; a
/// crash of the process (use after free) ends the test host. The race is created by randomized
/// delays; nothing is asserted about timing.
/// </summary>
internal sealed class DisposeRace
{
    private const int Keys = 64;
    private static readonly TimeSpan HangLimit = TimeSpan.FromMinutes(2);

    private readonly string _path;
    private readonly Random _rng;
    private readonly int _workers;
    private readonly ConcurrentQueue<string> _failures = new();
    private KvDb _db = null!;
    private volatile bool _disposeStarted;
    private long _succeeded;
    private long _refused;

    public DisposeRace(string path, int seed, int workers = 4)
    {
        _path = path;
        _rng = new Random(seed);
        _workers = workers;
    }

    /// <summary>Operations that returned normally during the trial.</summary>
    public long Succeeded => Interlocked.Read(ref _succeeded);

    /// <summary>Operations that threw ObjectDisposedException or KvException.</summary>
    public long Refused => Interlocked.Read(ref _refused);

    /// <summary>What went wrong: unexpected exceptions, wrong values, hung workers (empty when the trial passed).</summary>
    public IReadOnlyCollection<string> Failures => _failures;

    public void Run()
    {
        var options = new KvOptions
        {
            CreateIfMissing = true,
            FileSystem = NoSyncFileSystem.Instance, // the local files, memory-mapped WAL included, without the fsyncs
            WriteBufferSize = 32 << 10,
            MaxWriteBufferNumber = 3,
            MergeOperator = new StringAppendOperator((byte)','),
            AllowConcurrentMemtableWrite = _rng.Next(2) == 0,
        };
        _db = KvDb.Open(_path, options);
        for (int k = 0; k < Keys; k++)
        {
            _db.Put(Key(k), Value(k, 0));
        }
        _db.Flush(); // a table, so reads go through the table and block caches too
        KvIterator held = _db.NewIterator();
        held.SeekToFirst();
        Snapshot heldSnapshot = _db.GetSnapshot();

        using var start = new Barrier(_workers + 1);
        var threads = new Thread[_workers];
        for (int i = 0; i < _workers; i++)
        {
            int seed = _rng.Next();
            threads[i] = new Thread(() => Work(seed, start)) { IsBackground = true, Name = "dispose-race worker" };
            threads[i].Start();
        }
        start.SignalAndWait();
        int delay = _rng.Next(4);
        if (delay == 0)
        {
            Thread.SpinWait(_rng.Next(20_000));
        }
        else
        {
            Thread.Sleep(_rng.Next(1, 6));
        }
        _disposeStarted = true;
        if (_rng.Next(3) == 0)
        {
            _db.DisposeAsync().AsTask().GetAwaiter().GetResult();
        }
        else
        {
            _db.Dispose();
        }
        foreach (Thread t in threads)
        {
            if (!t.Join(HangLimit))
            {
                _failures.Enqueue($"a worker did not end within {HangLimit} of Dispose (hang)");
                return;
            }
        }

        // What outlived Dispose: use throws, Dispose is harmless.
        Expect<ObjectDisposedException>("iterator Next after Dispose", () => held.Next());
        Expect<ObjectDisposedException>("iterator Seek after Dispose", () => held.Seek(Key(1)));
        Expect<ObjectDisposedException>("iterator Valid after Dispose", () => _ = held.Valid);
        Expect<ObjectDisposedException>("read at a snapshot after Dispose", () => _db.Get(Key(1), new ReadOptions { Snapshot = heldSnapshot }));
        held.Dispose();
        held.Dispose();
        heldSnapshot.Dispose();
    }

    private void Expect<T>(string what, Action action)
        where T : Exception
    {
        try
        {
            action();
            _failures.Enqueue(what + ": returned normally, expected " + typeof(T).Name);
        }
        catch (T)
        {
        }
#pragma warning disable CA1031 // the test reports every unexpected exception
        catch (Exception e)
#pragma warning restore CA1031
        {
            _failures.Enqueue(what + ": " + e);
        }
    }

    private void Work(int seed, Barrier start)
    {
        var rng = new Random(seed);
        var sink = new ArrayBufferWriter<byte>();
        start.SignalAndWait();
        int afterDispose = 0;
        // Until the database is disposed, then a few more calls (the refused ones).
        while (afterDispose < 8)
        {
            if (_disposeStarted)
            {
                afterDispose++;
            }
            int op = rng.Next(28);
            try
            {
                RunOp(op, rng, sink);
                Interlocked.Increment(ref _succeeded);
            }
            catch (Exception e) when (IsRefusal(e))
            {
                Interlocked.Increment(ref _refused);
                afterDispose = Math.Max(afterDispose, 4);
            }
#pragma warning disable CA1031 // the test reports every unexpected exception
            catch (Exception e)
#pragma warning restore CA1031
            {
                _failures.Enqueue($"op {op}: {e}");
                return;
            }
        }
    }

    private static bool IsRefusal(Exception e) => e switch
    {
        ObjectDisposedException => true,
        KvException => true,
        AggregateException a => a.InnerExceptions.All(IsRefusal),
        _ => false,
    };

    private void RunOp(int op, Random rng, ArrayBufferWriter<byte> sink)
    {
        KvDb db = _db;
        int k = rng.Next(Keys);
        switch (op)
        {
            case 0:
            case 1:
                db.Put(Key(k), Value(k, rng.Next(1000)));
                break;
            case 2:
                db.Delete(Key(k));
                break;
            case 3:
                db.Merge(MergeKey(k), "m"u8);
                break;
            case 4:
            {
                using var batch = new WriteBatch();
                batch.Put(Key(k), Value(k, 1));
                batch.Put(Key((k + 1) % Keys), Value((k + 1) % Keys, 2));
                batch.Delete(Key((k + 2) % Keys));
                db.Write(batch);
                break;
            }
            case 5:
            {
                using var batch = new WriteBatch();
                batch.Put(Key(k), Value(k, 3));
                db.WriteAsync(batch).AsTask().GetAwaiter().GetResult();
                break;
            }
            case 6:
                db.PutAsync(Key(k), Value(k, 4)).AsTask().GetAwaiter().GetResult();
                break;
            case 7:
            case 8:
                CheckValue(k, db.Get(Key(k)));
                break;
            case 9:
                CheckValue(k, db.GetAsync(Key(k)).AsTask().GetAwaiter().GetResult());
                break;
            case 10:
                sink.Clear();
                if (db.TryGet(Key(k), sink))
                {
                    CheckValue(k, sink.WrittenSpan.ToArray());
                }
                break;
            case 11:
            {
                byte[]?[] values = db.MultiGet([Key(k), Key((k + 7) % Keys), Key((k + 13) % Keys)]);
                CheckValue(k, values[0]);
                CheckValue((k + 7) % Keys, values[1]);
                CheckValue((k + 13) % Keys, values[2]);
                break;
            }
            case 12:
            case 13:
                Scan(db, rng);
                break;
            case 14:
            {
                using Snapshot s = db.GetSnapshot();
                CheckValue(k, db.Get(Key(k), new ReadOptions { Snapshot = s }));
                using KvIterator it = db.NewIterator(new ReadOptions { Snapshot = s });
                it.Seek(Key(k));
                break;
            }
            case 15:
                if (rng.Next(8) == 0)
                {
                    db.Flush();
                }
                else
                {
                    db.Put(Key(k), Value(k, 5), new WriteOptions { DisableWal = true });
                }
                break;
            case 16:
                if (rng.Next(8) == 0)
                {
                    db.FlushAsync().AsTask().GetAwaiter().GetResult();
                }
                else
                {
                    db.SingleDelete(Key(k));
                }
                break;
            case 17:
                if (rng.Next(16) == 0)
                {
                    db.CompactRange(Key(0), Key(Keys / 2));
                }
                else
                {
                    db.DeleteRange(Key(k), Key(Math.Min(Keys, k + 2)));
                }
                break;
            case 18:
                if (rng.Next(16) == 0)
                {
                    db.CompactRangeAsync(null, null).AsTask().GetAwaiter().GetResult();
                }
                else
                {
                    db.DeleteAsync(Key(k)).AsTask().GetAwaiter().GetResult();
                }
                break;
            case 19:
                _ = db.GetProperty(rng.Next(4) switch
                {
                    0 => "rocksdb.stats",
                    1 => "rocksdb.estimate-num-keys",
                    2 => "rocksdb.cur-size-all-mem-tables",
                    _ => "rocksdb.num-files-at-level0",
                });
                break;
            case 20:
                _ = db.GetApproximateSizes([new KeyRange(Key(0), Key(Keys - 1))], SizeApproximationFlags.IncludeFiles | SizeApproximationFlags.IncludeMemtables);
                _ = db.GetApproximateMemTableStats(new KeyRange(Key(0), Key(Keys - 1)));
                break;
            case 21:
                _ = db.KeyMayExist(Key(k));
                _ = db.LatestSequenceNumber;
                break;
            case 22:
            {
                sink.Clear();
                var results = new MultiGetResults();
                db.MultiGet(new ReadOnlyMemory<byte>[] { Key(k), Key((k + 1) % Keys) }, results);
                break;
            }
            case 23:
                using (KvIterator it = db.NewIterator())
                {
                    it.SeekToLast();
                    for (int i = 0; i < 4 && it.Valid; i++)
                    {
                        it.Prev();
                    }
                    it.Refresh();
                    it.SeekForPrev(Key(k));
                }
                break;
            case 24:
                foreach (KeyValuePair<byte[], byte[]> e in ScanAsync(db, k))
                {
                    _ = e;
                }
                break;
            case 25:
                _ = db.GetLiveFiles(out _, flushMemtable: rng.Next(8) == 0);
                break;
            case 26:
                _ = db.ColumnFamilies;
                CheckValue(k, db.Get(db.DefaultColumnFamily, Key(k)));
                break;
            default:
                db.MergeAsync(MergeKey(k), "a"u8.ToArray()).AsTask().GetAwaiter().GetResult();
                break;
        }
    }

    private static List<KeyValuePair<byte[], byte[]>> ScanAsync(KvDb db, int k)
    {
        return Collect().GetAwaiter().GetResult();

        async Task<List<KeyValuePair<byte[], byte[]>>> Collect()
        {
            var list = new List<KeyValuePair<byte[], byte[]>>();
            await foreach (KeyValuePair<byte[], byte[]> e in db.ScanAsync(Key(k), Key(Math.Min(Keys - 1, k + 8))).ConfigureAwait(false))
            {
                list.Add(e);
            }
            return list;
        }
    }

    private void Scan(KvDb db, Random rng)
    {
        using KvIterator it = db.NewIterator();
        if (rng.Next(2) == 0)
        {
            it.SeekToFirst();
        }
        else
        {
            it.Seek(Key(rng.Next(Keys)));
        }
        for (int i = 0; i < 16 && it.Valid; i++)
        {
            string key = Encoding.ASCII.GetString(it.Key);
            if (key.StartsWith("key", StringComparison.Ordinal))
            {
                CheckValue(int.Parse(key.AsSpan(3), CultureInfo.InvariantCulture), it.Value.ToArray());
            }
            it.Next();
        }
    }

    private void CheckValue(int k, byte[]? value)
    {
        if (value == null)
        {
            return;
        }
        string expected = "value" + k.ToString("D3", CultureInfo.InvariantCulture) + ":";
        if (!Encoding.ASCII.GetString(value).StartsWith(expected, StringComparison.Ordinal))
        {
            _failures.Enqueue($"key {k}: read a value never written: {Convert.ToHexString(value)}");
        }
    }

    private static byte[] Key(int k) => Encoding.ASCII.GetBytes("key" + k.ToString("D3", CultureInfo.InvariantCulture));

    private static byte[] MergeKey(int k) => Encoding.ASCII.GetBytes("merge" + k.ToString("D3", CultureInfo.InvariantCulture));

    // Long enough that memtables fill and switch within a trial.
    private static byte[] Value(int k, int round) =>
        Encoding.ASCII.GetBytes("value" + k.ToString("D3", CultureInfo.InvariantCulture) + ":" + round.ToString(CultureInfo.InvariantCulture) + new string('x', 200));
}
