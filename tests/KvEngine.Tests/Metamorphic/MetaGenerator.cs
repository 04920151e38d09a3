using System.Globalization;

namespace KvEngine.Tests.Metamorphic;

/// <summary>
/// Makes a random op log from a seed (the same seed, the same log). Keys are a 3-byte prefix
/// ("apa", "apb", "bob", "bod", "cat", "dog") and an optional number, about 250 per family, so keys
/// are rewritten, merged, deleted and read often; the "sdk" keys get only SingleDelete's legal
/// pattern — a Put while absent, a SingleDelete while present — and no range deletion, ingested
/// file, Delete or Merge ever touches them. Snapshots used by an open iterator are not released;
/// every iterator is closed and every snapshot released before a reopen. Values run from a few
/// bytes to 9 KB (blocks of 256 B to 64 KiB see entries larger and smaller than themselves); with
/// <see cref="UInt64AddOperator"/> most values and operands are counters, some are not (read as 0).
/// The log ends with full scans, a reopen and full scans again. Not thread-safe.
/// </summary>
internal sealed class MetaGenerator
{
    private const int SingleDeleteKeys = 20;
    private static readonly string[] s_prefixes = ["apa", "apb", "bob", "bod", "cat", "dog"];
    private static readonly string[] s_oddTargets = ["a", "c", "zzz", "apa5x", "bob~", "sdk", "d"];

    private readonly Random _rng;
    private readonly int _families;
    private readonly bool _uint64Add;
    private readonly List<MetaOp> _ops = new();
    private readonly List<int> _snapshots = new();
    private readonly Dictionary<int, (int Snapshot, bool PrefixMode)> _iterators = new();
    private readonly bool[,] _singleDeletePresent;
    private int _nextSnapshot;
    private int _nextIterator;

    private MetaGenerator(int seed)
    {
        _rng = new Random(seed);
        _families = _rng.Next(4) == 0 ? 1 : 2 + _rng.Next(2);
        _uint64Add = _rng.Next(2) == 0;
        _singleDeletePresent = new bool[_families, SingleDeleteKeys];
    }

    public static MetaLog Generate(int seed, int operations)
    {
        var g = new MetaGenerator(seed);
        while (g._ops.Count < operations)
        {
            g.Step();
        }
        g.Finish();
        return new MetaLog(g._families, g._uint64Add, g._ops, $"seed {seed.ToString(CultureInfo.InvariantCulture)}, {operations.ToString(CultureInfo.InvariantCulture)} operations");
    }

    private void Step()
    {
        int dice = _rng.Next(1000);
        switch (dice)
        {
            case < 200:
                _ops.Add(PutOrSingleDelete(Family(), singleDelete: false));
                break;
            case < 240:
                _ops.Add(new MetaOp { Kind = MetaOpKind.Merge, Family = Family(), Key = NormalKey(), Value = Operand() });
                break;
            case < 290:
                _ops.Add(new MetaOp { Kind = MetaOpKind.Delete, Family = Family(), Key = NormalKey() });
                break;
            case < 320:
                _ops.Add(PutOrSingleDelete(Family(), singleDelete: true));
                break;
            case < 335:
                _ops.Add(DeleteRange(Family()));
                break;
            case < 420:
                _ops.Add(Batch());
                break;
            case < 430:
                _ops.Add(Ingest());
                break;
            case < 450:
                if (_snapshots.Count < 4)
                {
                    _snapshots.Add(_nextSnapshot);
                    _ops.Add(new MetaOp { Kind = MetaOpKind.Snapshot, Id = _nextSnapshot++ });
                }
                else
                {
                    Release();
                }
                break;
            case < 465:
                Release();
                break;
            case < 615:
                _ops.Add(new MetaOp { Kind = MetaOpKind.Get, Family = Family(), Key = ReadKey(), Snapshot = ReadSnapshot() });
                break;
            case < 655:
                {
                    var keys = new List<string>();
                    int n = 1 + _rng.Next(8);
                    for (int i = 0; i < n; i++)
                    {
                        keys.Add(ReadKey());
                    }
                    _ops.Add(new MetaOp { Kind = MetaOpKind.MultiGet, Family = Family(), Snapshot = ReadSnapshot(), Keys = keys });
                    break;
                }
            case < 670:
                _ops.Add(new MetaOp { Kind = _rng.Next(2) == 0 ? MetaOpKind.Scan : MetaOpKind.ReverseScan, Family = Family(), Snapshot = ReadSnapshot() });
                break;
            case < 700:
                if (_iterators.Count < 3)
                {
                    NewIterator();
                }
                else
                {
                    CloseIterator();
                }
                break;
            case < 930:
                if (_iterators.Count == 0)
                {
                    NewIterator();
                }
                MoveIterator();
                break;
            case < 945:
                CloseIterator();
                break;
            case < 965:
                _ops.Add(new MetaOp { Kind = MetaOpKind.Flush, Family = _rng.Next(3) == 0 ? -1 : Family() });
                break;
            case < 985:
                {
                    string? begin = _rng.Next(3) == 0 ? null : ReadKey();
                    string? end = _rng.Next(3) == 0 ? null : ReadKey();
                    if (begin != null && end != null && string.CompareOrdinal(begin, end) > 0)
                    {
                        (begin, end) = (end, begin);
                    }
                    _ops.Add(new MetaOp { Kind = MetaOpKind.Compact, Family = Family(), Key = begin, End = end });
                    break;
                }
            case < 995:
                Reopen();
                break;
            default:
                _ops.Add(new MetaOp { Kind = MetaOpKind.Checkpoint });
                break;
        }
    }

    private void Finish()
    {
        for (int f = 0; f < _families; f++)
        {
            _ops.Add(new MetaOp { Kind = MetaOpKind.Scan, Family = f, Snapshot = -1 });
        }
        Reopen();
        for (int f = 0; f < _families; f++)
        {
            _ops.Add(new MetaOp { Kind = MetaOpKind.Scan, Family = f, Snapshot = -1 });
            _ops.Add(new MetaOp { Kind = MetaOpKind.ReverseScan, Family = f, Snapshot = -1 });
        }
    }

    private int Family() => _rng.Next(_families);

    private string NormalKey()
    {
        string prefix = s_prefixes[_rng.Next(s_prefixes.Length)];
        return _rng.Next(10) == 0 ? prefix : prefix + _rng.Next(40).ToString(CultureInfo.InvariantCulture);
    }

    private static string SingleDeleteKey(int i) => "sdk" + i.ToString(CultureInfo.InvariantCulture);

    /// <summary>A key to read, seek to or bound by: mostly keys that are written, sometimes others.</summary>
    private string ReadKey() => _rng.Next(20) switch
    {
        < 15 => NormalKey(),
        < 17 => SingleDeleteKey(_rng.Next(SingleDeleteKeys)),
        < 19 => s_prefixes[_rng.Next(s_prefixes.Length)] + "~",
        _ => s_oddTargets[_rng.Next(s_oddTargets.Length)],
    };

    /// <summary>A seek target of a prefix-mode iterator: one in the prefix extractor's domain (3 bytes or more).</summary>
    private string PrefixTarget()
    {
        string k;
        do
        {
            k = ReadKey();
        }
        while (k.Length < ConfinedCursor.PrefixLength);
        return k;
    }

    private int ReadSnapshot() => _snapshots.Count > 0 && _rng.Next(3) == 0 ? _snapshots[_rng.Next(_snapshots.Count)] : -1;

    private string Value()
    {
        string tag = "v" + _ops.Count.ToString(CultureInfo.InvariantCulture);
        if (_uint64Add && _rng.Next(5) != 0)
        {
            return "#" + _rng.Next(1000).ToString(CultureInfo.InvariantCulture);
        }
        int length = _rng.Next(100) switch
        {
            < 55 => 0,
            < 88 => 20 + _rng.Next(280),
            < 98 => 300 + _rng.Next(1700),
            _ => 2000 + _rng.Next(7000),
        };
        return length == 0 ? tag : tag + "~" + length.ToString(CultureInfo.InvariantCulture);
    }

    private string Operand()
    {
        if (_uint64Add)
        {
            return _rng.Next(20) == 0 ? "m" + _ops.Count.ToString(CultureInfo.InvariantCulture) : "#" + (1 + _rng.Next(100)).ToString(CultureInfo.InvariantCulture);
        }
        return "m" + _ops.Count.ToString(CultureInfo.InvariantCulture);
    }

    /// <summary>
    /// A Put of a normal key, or (one time in six, or when <paramref name="singleDelete"/>) the next
    /// legal step of a single-delete key: Put while absent, SingleDelete while present.
    /// </summary>
    private MetaOp PutOrSingleDelete(int family, bool singleDelete)
    {
        if (singleDelete || _rng.Next(6) == 0)
        {
            int i = _rng.Next(SingleDeleteKeys);
            bool present = _singleDeletePresent[family, i];
            if (singleDelete == present)
            {
                _singleDeletePresent[family, i] = !present;
                return present
                    ? new MetaOp { Kind = MetaOpKind.SingleDelete, Family = family, Key = SingleDeleteKey(i) }
                    : new MetaOp { Kind = MetaOpKind.Put, Family = family, Key = SingleDeleteKey(i), Value = Value() };
            }
        }
        return new MetaOp { Kind = MetaOpKind.Put, Family = family, Key = NormalKey(), Value = Value() };
    }

    /// <summary>A range [begin, end) of normal keys, begin &lt; end (never reaching the "sdk" keys).</summary>
    private (string Begin, string End) Range()
    {
        // Mostly narrow (a key and its extensions, or part of one prefix), sometimes wide.
        string a = NormalKey();
        string b = _rng.Next(10) switch
        {
            < 6 => a + _rng.Next(10).ToString(CultureInfo.InvariantCulture),
            < 9 => a[..3] + _rng.Next(40).ToString(CultureInfo.InvariantCulture),
            _ => NormalKey(),
        };
        int c = string.CompareOrdinal(a, b);
        return c < 0 ? (a, b) : c > 0 ? (b, a) : (a, a + "~");
    }

    private MetaOp DeleteRange(int family)
    {
        (string begin, string end) = Range();
        return new MetaOp { Kind = MetaOpKind.DeleteRange, Family = family, Key = begin, End = end };
    }

    private MetaOp Batch()
    {
        var records = new List<MetaOp>();
        int n = 2 + _rng.Next(7);
        for (int i = 0; i < n; i++)
        {
            int f = Family();
            records.Add(_rng.Next(10) switch
            {
                < 4 => PutOrSingleDelete(f, singleDelete: false),
                < 6 => new MetaOp { Kind = MetaOpKind.Merge, Family = f, Key = NormalKey(), Value = Operand() },
                < 8 => new MetaOp { Kind = MetaOpKind.Delete, Family = f, Key = NormalKey() },
                < 9 => PutOrSingleDelete(f, singleDelete: true),
                _ => DeleteRange(f),
            });
        }
        return new MetaOp { Kind = MetaOpKind.Batch, Records = records };
    }

    private MetaOp Ingest()
    {
        int family = Family();
        var records = new List<MetaOp>();
        if (_rng.Next(4) == 0)
        {
            (string begin, string end) = Range();
            records.Add(new MetaOp { Kind = MetaOpKind.DeleteRange, Family = family, Key = begin, End = end });
        }
        var keys = new SortedSet<string>(StringComparer.Ordinal);
        int n = 1 + _rng.Next(8);
        for (int i = 0; i < n; i++)
        {
            keys.Add(NormalKey());
        }
        foreach (string k in keys)
        {
            records.Add(_rng.Next(10) switch
            {
                < 6 => new MetaOp { Kind = MetaOpKind.Put, Family = family, Key = k, Value = Value() },
                < 8 => new MetaOp { Kind = MetaOpKind.Delete, Family = family, Key = k },
                _ => new MetaOp { Kind = MetaOpKind.Merge, Family = family, Key = k, Value = Operand() },
            });
        }
        return new MetaOp { Kind = MetaOpKind.Ingest, Family = family, Records = records };
    }

    private void Release()
    {
        var free = _snapshots.FindAll(s => !_iterators.Values.Any(v => v.Snapshot == s));
        if (free.Count > 0)
        {
            int s = free[_rng.Next(free.Count)];
            _snapshots.Remove(s);
            _ops.Add(new MetaOp { Kind = MetaOpKind.Release, Id = s });
        }
    }

    private void NewIterator()
    {
        int id = _nextIterator++;
        int snapshot = ReadSnapshot();
        bool prefix = _rng.Next(4) == 0;
        string? lower = null;
        string? upper = null;
        if (!prefix)
        {
            lower = _rng.Next(3) == 0 ? ReadKey() : null;
            upper = _rng.Next(3) == 0 ? ReadKey() : null;
            if (lower != null && upper != null && string.CompareOrdinal(lower, upper) > 0)
            {
                (lower, upper) = (upper, lower);
            }
        }
        _iterators.Add(id, (snapshot, prefix));
        _ops.Add(new MetaOp { Kind = MetaOpKind.Iter, Id = id, Family = Family(), Snapshot = snapshot, Key = lower, End = upper, PrefixMode = prefix });
    }

    private void MoveIterator()
    {
        int id = _iterators.Keys.ElementAt(_rng.Next(_iterators.Count));
        bool prefixMode = _iterators[id].PrefixMode;
        _ops.Add(_rng.Next(100) switch
        {
            < 25 => new MetaOp { Kind = MetaOpKind.Seek, Id = id, Key = prefixMode ? PrefixTarget() : ReadKey() },
            < 40 => new MetaOp { Kind = MetaOpKind.SeekForPrev, Id = id, Key = prefixMode ? PrefixTarget() : ReadKey() },
            < 50 => new MetaOp { Kind = MetaOpKind.First, Id = id },
            < 60 => new MetaOp { Kind = MetaOpKind.Last, Id = id },
            < 88 => new MetaOp { Kind = MetaOpKind.Next, Id = id },
            _ => new MetaOp { Kind = MetaOpKind.Prev, Id = id },
        });
    }

    private void CloseIterator()
    {
        if (_iterators.Count > 0)
        {
            int id = _iterators.Keys.ElementAt(_rng.Next(_iterators.Count));
            _iterators.Remove(id);
            _ops.Add(new MetaOp { Kind = MetaOpKind.CloseIter, Id = id });
        }
    }

    private void Reopen()
    {
        foreach (int id in _iterators.Keys.Order().ToList())
        {
            _ops.Add(new MetaOp { Kind = MetaOpKind.CloseIter, Id = id });
        }
        _iterators.Clear();
        foreach (int s in _snapshots)
        {
            _ops.Add(new MetaOp { Kind = MetaOpKind.Release, Id = s });
        }
        _snapshots.Clear();
        _ops.Add(new MetaOp { Kind = MetaOpKind.Reopen });
    }
}
