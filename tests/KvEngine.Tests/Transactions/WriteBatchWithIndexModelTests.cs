using System.Text;
using KvEngine.Tests.Db;

namespace KvEngine.Tests.Transactions;

/// <summary>
/// WriteBatchWithIndex against a sorted-dictionary model: a database filled with random puts,
/// deletes and merges (part of it flushed), then random batch writes; after each step every
/// key's GetFromBatchAndDB, full forward and backward scans and a random walk of Seek,
/// SeekForPrev, Next and Prev (with and without bounds) must match the model of the database
/// with the batch applied, and committing the batch must leave the database equal to it.
/// </summary>
public class WriteBatchWithIndexModelTests
{
    private const int KeySpace = 48;

    private static byte[] Key(int i) => Encoding.ASCII.GetBytes($"k{i:D3}");

    private static KvDb OpenDb()
    {
        var options = DbTestUtil.SmallOptions(DbTestUtil.NewFs());
        options.MergeOperator = new StringAppendOperator((byte)',');
        return KvDb.Open(DbTestUtil.DbPath, options);
    }

    private static void ApplyMerge(SortedDictionary<byte[], byte[]> model, byte[] key, byte[] operand) =>
        model[key] = model.TryGetValue(key, out byte[]? old) ? [.. old, (byte)',', .. operand] : operand;

    private static SortedDictionary<byte[], byte[]> FillDb(KvDb db, Random rng)
    {
        var model = new SortedDictionary<byte[], byte[]>(ByteArrayComparer.Instance);
        for (int i = 0; i < 300; i++)
        {
            byte[] key = Key(rng.Next(KeySpace));
            byte[] value = Encoding.ASCII.GetBytes("d" + i);
            switch (rng.Next(4))
            {
                case 0:
                    db.Delete(key);
                    model.Remove(key);
                    break;
                case 1:
                    db.Merge(key, value);
                    ApplyMerge(model, key, value);
                    break;
                default:
                    db.Put(key, value);
                    model[key] = value;
                    break;
            }
            if (i == 150)
            {
                db.Flush();
            }
        }
        return model;
    }

    [Theory]
    [InlineData(1, false)]
    [InlineData(2, true)]
    [InlineData(3, false)]
    [InlineData(4, true)]
    [InlineData(5, false)]
    [InlineData(6, true)]
    public void ReadsMatchModel(int seed, bool overwrite)
    {
        var rng = new Random(seed);
        using KvDb db = OpenDb();
        SortedDictionary<byte[], byte[]> model = FillDb(db, rng);
        using var batch = new WriteBatchWithIndex(overwrite);
        for (int round = 0; round < 4; round++)
        {
            for (int i = 0; i < 40; i++)
            {
                byte[] key = Key(rng.Next(KeySpace + 8));
                byte[] value = Encoding.ASCII.GetBytes($"b{round}.{i}");
                switch (rng.Next(5))
                {
                    case 0:
                        batch.Delete(key);
                        model.Remove(key);
                        break;
                    case 1:
                        batch.SingleDelete(key);
                        model.Remove(key);
                        break;
                    case 2:
                    case 3:
                        batch.Merge(key, value);
                        ApplyMerge(model, key, value);
                        break;
                    default:
                        batch.Put(key, value);
                        model[key] = value;
                        break;
                }
            }
            CheckAgainstModel(db, batch, model, rng);
        }
        if (overwrite)
        {
            Assert.True(batch.IndexedEntries < batch.Count);
        }
        else
        {
            Assert.Equal(batch.Count, batch.IndexedEntries);
        }
        db.Write(batch.WriteBatch);
        for (int i = 0; i < KeySpace + 8; i++)
        {
            model.TryGetValue(Key(i), out byte[]? expected);
            Assert.Equal(expected, db.Get(Key(i)));
        }
    }

    [Theory]
    [InlineData(11)]
    [InlineData(12)]
    [InlineData(13)]
    public void RollbackToSavePointRestoresModel(int seed)
    {
        var rng = new Random(seed);
        using KvDb db = OpenDb();
        SortedDictionary<byte[], byte[]> model = FillDb(db, rng);
        using var batch = new WriteBatchWithIndex(overwriteKey: seed % 2 == 0);
        var saved = new Stack<(SortedDictionary<byte[], byte[]> Model, int Count)>();
        for (int i = 0; i < 200; i++)
        {
            int op = rng.Next(12);
            if (op == 0)
            {
                batch.SetSavePoint();
                saved.Push((new SortedDictionary<byte[], byte[]>(model, ByteArrayComparer.Instance), batch.Count));
                continue;
            }
            if (op == 1 && saved.Count > 0)
            {
                batch.RollbackToSavePoint();
                (model, int count) = saved.Pop();
                Assert.Equal(count, batch.Count);
                CheckAgainstModel(db, batch, model, rng);
                continue;
            }
            byte[] key = Key(rng.Next(KeySpace));
            byte[] value = Encoding.ASCII.GetBytes("s" + i);
            if (op < 5)
            {
                batch.Delete(key);
                model.Remove(key);
            }
            else if (op < 8)
            {
                batch.Merge(key, value);
                ApplyMerge(model, key, value);
            }
            else
            {
                batch.Put(key, value);
                model[key] = value;
            }
        }
        CheckAgainstModel(db, batch, model, rng);
        while (saved.Count > 0)
        {
            batch.RollbackToSavePoint();
            (model, _) = saved.Pop();
        }
        CheckAgainstModel(db, batch, model, rng);
        Assert.Throws<InvalidOperationException>(batch.RollbackToSavePoint);
    }

    [Fact]
    public void GetFromBatchAloneDistinguishesDeletedAbsentAndMergeInProgress()
    {
        using var batch = new WriteBatchWithIndex();
        var op = new StringAppendOperator((byte)',');
        batch.Put(Key(1), "a"u8);
        batch.Merge(Key(1), "b"u8);
        batch.Delete(Key(2));
        batch.Merge(Key(3), "c"u8);
        Assert.Equal("a,b"u8.ToArray(), batch.GetFromBatch(Key(1), op));
        Assert.Null(batch.GetFromBatch(Key(2)));
        Assert.Null(batch.GetFromBatch(Key(4)));
        Assert.Throws<InvalidOperationException>(() => batch.GetFromBatch(Key(3), op));
        Assert.Throws<InvalidOperationException>(() => batch.GetFromBatch(Key(1))); // no merge operator
        batch.Put(Key(3), "d"u8);
        Assert.Equal("d"u8.ToArray(), batch.GetFromBatch(Key(3), op));
    }

    /// <summary>Every key's value, full scans both ways and a random walk, with and without bounds.</summary>
    private static void CheckAgainstModel(KvDb db, WriteBatchWithIndex batch, SortedDictionary<byte[], byte[]> model, Random rng)
    {
        for (int i = 0; i < KeySpace + 8; i++)
        {
            model.TryGetValue(Key(i), out byte[]? expected);
            Assert.Equal(expected, batch.GetFromBatchAndDB(db, null, Key(i)));
        }
        for (int pass = 0; pass < 3; pass++)
        {
            ReadOptions? options = null;
            List<KeyValuePair<byte[], byte[]>> expected = [.. model];
            if (pass > 0)
            {
                int a = rng.Next(KeySpace + 8);
                int b = a + 1 + rng.Next(KeySpace / 2);
                options = new ReadOptions
                {
                    IterateLowerBound = pass == 1 ? Key(a) : null,
                    IterateUpperBound = Key(b),
                };
                expected = expected.FindAll(kv =>
                    (options.IterateLowerBound == null || kv.Key.AsSpan().SequenceCompareTo(options.IterateLowerBound) >= 0)
                    && kv.Key.AsSpan().SequenceCompareTo(options.IterateUpperBound) < 0);
            }
            using KvIteratorWithBase it = batch.NewIteratorWithBase(db.DefaultColumnFamily, db.NewIterator(options), options);
            var seen = new List<KeyValuePair<byte[], byte[]>>();
            for (it.SeekToFirst(); it.Valid; it.Next())
            {
                seen.Add(new(it.Key.ToArray(), it.Value.ToArray()));
            }
            AssertSame(expected, seen);
            seen.Clear();
            for (it.SeekToLast(); it.Valid; it.Prev())
            {
                seen.Add(new(it.Key.ToArray(), it.Value.ToArray()));
            }
            seen.Reverse();
            AssertSame(expected, seen);
            RandomWalk(it, expected, rng);
        }
    }

    private static void RandomWalk(KvIteratorWithBase it, List<KeyValuePair<byte[], byte[]>> expected, Random rng)
    {
        int pos = -1;
        for (int step = 0; step < 300; step++)
        {
            int op = rng.Next(pos >= 0 ? 6 : 4);
            byte[] target = Key(rng.Next(KeySpace + 8));
            switch (op)
            {
                case 0:
                    it.Seek(target);
                    pos = expected.FindIndex(kv => kv.Key.AsSpan().SequenceCompareTo(target) >= 0);
                    break;
                case 1:
                    it.SeekForPrev(target);
                    pos = expected.FindLastIndex(kv => kv.Key.AsSpan().SequenceCompareTo(target) <= 0);
                    break;
                case 2:
                    it.SeekToFirst();
                    pos = expected.Count > 0 ? 0 : -1;
                    break;
                case 3:
                    it.SeekToLast();
                    pos = expected.Count - 1;
                    break;
                case 4:
                    it.Next();
                    pos = pos + 1 < expected.Count ? pos + 1 : -1;
                    break;
                default:
                    it.Prev();
                    pos--;
                    break;
            }
            Assert.Equal(pos >= 0, it.Valid);
            if (pos >= 0)
            {
                Assert.Equal(expected[pos].Key, it.Key.ToArray());
                Assert.Equal(expected[pos].Value, it.Value.ToArray());
            }
        }
    }

    private static void AssertSame(List<KeyValuePair<byte[], byte[]>> expected, List<KeyValuePair<byte[], byte[]>> seen)
    {
        Assert.Equal(expected.Count, seen.Count);
        for (int i = 0; i < expected.Count; i++)
        {
            Assert.Equal(expected[i].Key, seen[i].Key);
            Assert.Equal(expected[i].Value, seen[i].Value);
        }
    }
}
