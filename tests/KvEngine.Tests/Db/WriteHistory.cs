using System.Text;

namespace KvEngine.Tests.Db;

/// <summary>
/// A random history of writes (each an atomic batch of puts, deletes and range deletions — a
/// record with a RangeEnd deletes [Key, RangeEnd) — over a small key space, every value unique to
/// its write) and the check that a database holds exactly the state after
/// some prefix of it. Not thread-safe: one writer appends, the checker runs after it stopped.
/// </summary>
internal sealed class WriteHistory
{
    private readonly Random _rng;
    private readonly int _keySpace;
    private readonly string _tag;
    private readonly List<(string Key, string? Value, string? RangeEnd)[]> _ops = new();
    private int _serial;

    /// <param name="tag">Part of every value, so values of different histories never coincide.</param>
    public WriteHistory(Random rng, int keySpace, string tag)
    {
        _rng = rng;
        _keySpace = keySpace;
        _tag = tag;
    }

    public int Count => _ops.Count;

    /// <summary>Makes the next write (1..4 records), records it and returns it.</summary>
    public (string Key, string? Value, string? RangeEnd)[] Next()
    {
        int n = _rng.Next(10) < 7 ? 1 : _rng.Next(2, 5);
        var records = new (string, string?, string?)[n];
        int serial = _serial++;
        for (int i = 0; i < n; i++)
        {
            string key = "key" + _rng.Next(_keySpace).ToString("D5", System.Globalization.CultureInfo.InvariantCulture);
            string? value = null;
            string? rangeEnd = null;
            if (_rng.Next(15) == 0)
            {
                int begin = int.Parse(key.AsSpan(3), System.Globalization.CultureInfo.InvariantCulture);
                rangeEnd = "key" + (begin + _rng.Next(1, 25)).ToString("D5", System.Globalization.CultureInfo.InvariantCulture);
            }
            else if (_rng.Next(10) != 0)
            {
                var sb = new StringBuilder();
                sb.Append(_tag).Append('.').Append(serial).Append('.').Append(i).Append('.');
                sb.Append('x', _rng.Next(10, 300));
                value = sb.ToString();
            }
            records[i] = (key, value, rangeEnd);
        }
        _ops.Add(records);
        return records;
    }

    /// <summary>Writes one history entry to <paramref name="db"/> (Put/Delete for one record, a batch otherwise).</summary>
    public static void Apply(KvDb db, (string Key, string? Value, string? RangeEnd)[] records, WriteOptions options)
    {
        if (records.Length == 1)
        {
            if (records[0].RangeEnd is { } end)
            {
                db.DeleteRange(DbTestUtil.B(records[0].Key), DbTestUtil.B(end), options);
            }
            else if (records[0].Value is { } v)
            {
                db.Put(DbTestUtil.B(records[0].Key), DbTestUtil.B(v), options);
            }
            else
            {
                db.Delete(DbTestUtil.B(records[0].Key), options);
            }
            return;
        }
        using var batch = new WriteBatch();
        foreach ((string k, string? v, string? end) in records)
        {
            if (end != null)
            {
                batch.DeleteRange(DbTestUtil.B(k), DbTestUtil.B(end));
            }
            else if (v != null)
            {
                batch.Put(DbTestUtil.B(k), DbTestUtil.B(v));
            }
            else
            {
                batch.Delete(DbTestUtil.B(k));
            }
        }
        db.Write(batch, options);
    }

    /// <summary>
    /// Asserts that <paramref name="actual"/> equals <paramref name="start"/> with the first p
    /// writes applied, for some p in [<paramref name="lo"/>, <paramref name="hi"/>]; returns p.
    /// </summary>
    public int AssertPrefix(IReadOnlyDictionary<string, string> start, IReadOnlyDictionary<string, string> actual, int lo, int hi, string context)
    {
        Assert.InRange(hi, lo, _ops.Count);
        var model = new Dictionary<string, string>(start, StringComparer.Ordinal);
        int diff = 0;
        foreach (KeyValuePair<string, string> e in model)
        {
            if (!actual.TryGetValue(e.Key, out string? a) || a != e.Value)
            {
                diff++;
            }
        }
        foreach (KeyValuePair<string, string> e in actual)
        {
            if (!model.ContainsKey(e.Key))
            {
                diff++;
            }
        }
        int found = -1;
        for (int p = 0; ; p++)
        {
            if (diff == 0 && p >= lo)
            {
                found = p;
            }
            if (p == hi)
            {
                break;
            }
            foreach ((string k, string? v, string? end) in _ops[p])
            {
                foreach (string key in Affected(model, actual, k, end))
                {
                    bool before = Same(model, actual, key);
                    if (v == null)
                    {
                        model.Remove(key);
                    }
                    else
                    {
                        model[key] = v;
                    }
                    bool after = Same(model, actual, key);
                    diff += before == after ? 0 : before ? 1 : -1;
                }
            }
        }
        if (found < 0)
        {
            Assert.Fail($"{context}: the database is not the state after any prefix of [{lo}, {hi}] writes ({Describe(start, actual, lo)})");
        }
        return found;
    }

    // The keys a record touches: its key, or for a range deletion every key in [key, end) that the
    // model or the database holds.
    private static List<string> Affected(Dictionary<string, string> model, IReadOnlyDictionary<string, string> actual, string key, string? end)
    {
        if (end == null)
        {
            return [key];
        }
        var keys = new SortedSet<string>(StringComparer.Ordinal);
        foreach (string k in model.Keys.Concat(actual.Keys))
        {
            if (string.CompareOrdinal(k, key) >= 0 && string.CompareOrdinal(k, end) < 0)
            {
                keys.Add(k);
            }
        }
        return [.. keys];
    }

    private static bool Same(Dictionary<string, string> model, IReadOnlyDictionary<string, string> actual, string key)
    {
        bool inModel = model.TryGetValue(key, out string? m);
        bool inActual = actual.TryGetValue(key, out string? a);
        return inModel == inActual && m == a;
    }

    private string Describe(IReadOnlyDictionary<string, string> start, IReadOnlyDictionary<string, string> actual, int lo)
    {
        // The state after the durable prefix, to show the first difference.
        var model = new Dictionary<string, string>(start, StringComparer.Ordinal);
        for (int p = 0; p < lo; p++)
        {
            foreach ((string k, string? v, string? end) in _ops[p])
            {
                foreach (string key in Affected(model, model, k, end))
                {
                    if (v == null)
                    {
                        model.Remove(key);
                    }
                    else
                    {
                        model[key] = v;
                    }
                }
            }
        }
        foreach (KeyValuePair<string, string> e in model)
        {
            if (!actual.TryGetValue(e.Key, out string? a))
            {
                return $"after {lo} writes {e.Key} = {Head(e.Value)} but it is missing";
            }
            if (a != e.Value)
            {
                return $"after {lo} writes {e.Key} = {Head(e.Value)} but it holds {Head(a)}";
            }
        }
        foreach (KeyValuePair<string, string> e in actual)
        {
            if (!model.ContainsKey(e.Key))
            {
                return $"after {lo} writes {e.Key} is absent but it holds {Head(e.Value)}";
            }
        }
        return "no difference from the durable prefix";
    }

    private static string Head(string v) => v.Length <= 16 ? v : v[..16] + "...";
}
