namespace KvEngine.Tests.Db;

/// <summary>
/// The iterator check the database and range-deletion model tests share: a random lower and upper
/// bound (each one time in three), a random positioning (SeekToFirst, SeekToLast, Seek,
/// SeekForPrev), then a random walk of Next and Prev, each step compared with the model's keys
/// inside the bounds. Stateless.
/// </summary>
internal static class ModelIteratorCheck
{
    /// <param name="randomKey">Draws a key of the test's key space.</param>
    /// <param name="show">Formats a key for a failure message.</param>
    /// <param name="family">The column family to iterate (the default family when null).</param>
    public static void Run(KvDb db, SortedDictionary<byte[], byte[]> model, Random rng, Snapshot? snap, string where,
        Func<Random, byte[]> randomKey, int steps, Func<byte[]?, string> show, ColumnFamilyHandle? family = null)
    {
        byte[]? lower = rng.Next(3) == 0 ? randomKey(rng) : null;
        byte[]? upper = rng.Next(3) == 0 ? randomKey(rng) : null;
        var visible = new List<byte[]>();
        foreach (byte[] k in model.Keys)
        {
            if ((lower == null || ByteArrayComparer.Instance.Compare(k, lower) >= 0) &&
                (upper == null || ByteArrayComparer.Instance.Compare(k, upper) < 0))
            {
                visible.Add(k);
            }
        }
        var options = new ReadOptions { Snapshot = snap, IterateLowerBound = lower, IterateUpperBound = upper };
        using KvIterator it = family == null ? db.NewIterator(options) : db.NewIterator(family, options);
        int pos;
        switch (rng.Next(4))
        {
            case 0:
                it.SeekToFirst();
                pos = 0;
                break;
            case 1:
                it.SeekToLast();
                pos = visible.Count - 1;
                break;
            case 2:
                {
                    byte[] target = randomKey(rng);
                    it.Seek(target);
                    pos = visible.FindIndex(k => ByteArrayComparer.Instance.Compare(k, target) >= 0);
                    if (pos < 0)
                    {
                        pos = visible.Count;
                    }
                    break;
                }
            default:
                {
                    byte[] target = randomKey(rng);
                    it.SeekForPrev(target);
                    pos = visible.FindLastIndex(k => ByteArrayComparer.Instance.Compare(k, target) <= 0);
                    break;
                }
        }
        for (int step = 0; step < steps; step++)
        {
            bool expectValid = pos >= 0 && pos < visible.Count;
            Assert.True(expectValid == it.Valid, $"{where}: step {step} valid={it.Valid}, model expects {expectValid} at {pos} ({(expectValid ? show(visible[pos]) : "-")})");
            if (!expectValid)
            {
                break;
            }
            Assert.True(visible[pos].AsSpan().SequenceEqual(it.Key), $"{where}: step {step} key {show(it.Key.ToArray())}, model {show(visible[pos])}");
            Assert.True(model[visible[pos]].AsSpan().SequenceEqual(it.Value), $"{where}: step {step} value differs for {show(visible[pos])}");
            if (rng.Next(3) == 0)
            {
                it.Prev();
                pos--;
            }
            else
            {
                it.Next();
                pos++;
            }
        }
    }
}
