using KvEngine.Storage;
using static KvEngine.Tests.Db.DbTestUtil;

namespace KvEngine.Tests.Db.Checkpoints;

/// <summary>
/// Checkpoints against an in-memory model: random puts, deletes, range deletions and merges in two
/// families, with flushes and compactions in between, and checkpoints taken at random points under
/// every flush rule. Taken between operations, a checkpoint equals the model exactly; taken while
/// another thread writes, it equals the model after some prefix of the operations, between those
/// done before CreateCheckpoint started and those done (or in flight) when it returned.
/// </summary>
public sealed class CheckpointModelTests
{
    private enum Kind
    {
        Put,
        Delete,
        DeleteRange,
        Merge,
    }

    private readonly record struct Op(Kind Kind, int Family, string Key, string Value);

    private static readonly ulong[] s_flushRules = [0, ulong.MaxValue, 4096];

    private static KvOptions Options(FaultInjectionFileSystem fs) => new()
    {
        FileSystem = fs,
        WriteBufferSize = 8 << 10,
        MergeOperator = new StringAppendOperator(),
        CreateMissingColumnFamilies = true,
        Level0FileNumCompactionTrigger = 2,
    };

    private static ColumnFamilyDescriptor[] Families() =>
        [new ColumnFamilyDescriptor("cf", new ColumnFamilyOptions { WriteBufferSize = 8 << 10, MergeOperator = new StringAppendOperator() })];

    private static List<Op> RandomOps(Random rnd, int count)
    {
        var ops = new List<Op>(count);
        for (int i = 0; i < count; i++)
        {
            int family = rnd.Next(2);
            string key = $"k{rnd.Next(64):D2}";
            int roll = rnd.Next(100);
            ops.Add(roll switch
            {
                < 55 => new Op(Kind.Put, family, key, $"v{i}-{new string('p', rnd.Next(60))}"),
                < 70 => new Op(Kind.Delete, family, key, ""),
                < 75 => new Op(Kind.DeleteRange, family, key, $"k{int.Parse(key.AsSpan(1), System.Globalization.CultureInfo.InvariantCulture) + rnd.Next(1, 8):D2}"),
                _ => new Op(Kind.Merge, family, key, $"m{i}"),
            });
        }
        return ops;
    }

    private static void Apply(KvDb db, Op op)
    {
        ColumnFamilyHandle cf = op.Family == 0 ? db.DefaultColumnFamily : db.GetColumnFamily("cf")!;
        switch (op.Kind)
        {
            case Kind.Put:
                db.Put(cf, B(op.Key), B(op.Value));
                break;
            case Kind.Delete:
                db.Delete(cf, B(op.Key));
                break;
            case Kind.DeleteRange:
                db.DeleteRange(cf, B(op.Key), B(op.Value));
                break;
            default:
                db.Merge(cf, B(op.Key), B(op.Value));
                break;
        }
    }

    private static void Apply(SortedDictionary<string, string>[] model, Op op)
    {
        SortedDictionary<string, string> m = model[op.Family];
        switch (op.Kind)
        {
            case Kind.Put:
                m[op.Key] = op.Value;
                break;
            case Kind.Delete:
                m.Remove(op.Key);
                break;
            case Kind.DeleteRange:
                foreach (string k in m.Keys.Where(k => string.CompareOrdinal(k, op.Key) >= 0 && string.CompareOrdinal(k, op.Value) < 0).ToList())
                {
                    m.Remove(k);
                }
                break;
            default:
                m[op.Key] = m.TryGetValue(op.Key, out string? old) ? old + "," + op.Value : op.Value;
                break;
        }
    }

    private static SortedDictionary<string, string>[] NewModel() =>
        [new(StringComparer.Ordinal), new(StringComparer.Ordinal)];

    /// <summary>The checkpoint's contents (default, cf), read by a read-write or a read-only open.</summary>
    private static SortedDictionary<string, string>[] ReadCheckpoint(FaultInjectionFileSystem fs, string dir, bool readOnly)
    {
        using KvDb db = readOnly ? KvDb.OpenReadOnly(dir, Options(fs), DbTestUtil.WithDefault(Options(fs), Families())) : KvDb.Open(dir, Options(fs), DbTestUtil.WithDefault(Options(fs), Families()));
        return [CheckpointContents.ReadFamily(db, db.DefaultColumnFamily), CheckpointContents.ReadFamily(db, db.GetColumnFamily("cf")!)];
    }

    private static bool Same(SortedDictionary<string, string>[] a, SortedDictionary<string, string>[] b) =>
        a[0].SequenceEqual(b[0]) && a[1].SequenceEqual(b[1]);

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public void CheckpointsBetweenOperationsEqualTheModel(int seed)
    {
        var rnd = new Random(seed);
        FaultInjectionFileSystem fs = NewFs();
        SortedDictionary<string, string>[] model = NewModel();
        int checkpoints = 0;
        using KvDb db = KvDb.Open(DbPath, Options(fs), DbTestUtil.WithDefault(Options(fs), Families()));
        foreach (Op op in RandomOps(rnd, 3000))
        {
            Apply(db, op);
            Apply(model, op);
            int roll = rnd.Next(1000);
            if (roll < 5)
            {
                db.Flush();
            }
            else if (roll < 7)
            {
                db.CompactRange(db.GetColumnFamily("cf")!, null, null);
            }
            else if (roll < 15)
            {
                string dir = $"{Parent}/ckpt{checkpoints++}";
                db.CreateCheckpoint(dir, s_flushRules[rnd.Next(s_flushRules.Length)]);
                SortedDictionary<string, string>[] got = ReadCheckpoint(fs, dir, readOnly: rnd.Next(2) == 0);
                Assert.Equal(model[0], got[0]);
                Assert.Equal(model[1], got[1]);
            }
        }
        Assert.True(checkpoints > 5, $"{checkpoints} checkpoints");
    }

    [Theory]
    [InlineData(11)]
    [InlineData(12)]
    public void CheckpointsUnderConcurrentWritesHoldAPrefixOfHistory(int seed)
    {
        var rnd = new Random(seed);
        FaultInjectionFileSystem fs = NewFs();
        List<Op> ops = RandomOps(rnd, 4000);
        const int count = 10;
        // The writer holds at each target until that checkpoint is about to start, then both run:
        // every checkpoint starts with the writer still going (nothing waits on time).
        var targets = new int[count];
        for (int i = 0; i < count; i++)
        {
            targets[i] = (i * ops.Count / count) + rnd.Next(ops.Count / count / 2);
        }
        int completed = 0;
        int started = 0;
        var taken = new List<(string Dir, int Before, int After)>();
        using (KvDb db = KvDb.Open(DbPath, Options(fs), DbTestUtil.WithDefault(Options(fs), Families())))
        {
            Exception? writerError = null;
            var writer = new Thread(() =>
            {
                try
                {
                    int next = 0;
                    for (int k = 0; k < ops.Count; k++)
                    {
                        while (next < count && targets[next] == k)
                        {
                            var wait = new SpinWait();
                            while (Volatile.Read(ref started) <= next)
                            {
                                wait.SpinOnce(sleep1Threshold: -1); // never Sleep(1): resume as soon as released
                            }
                            next++;
                        }
                        Apply(db, ops[k]);
                        Interlocked.Increment(ref completed);
                    }
                }
                catch (Exception e)
                {
                    writerError = e;
                    Volatile.Write(ref completed, int.MaxValue);
                }
            });
            writer.Start();
            for (int i = 0; i < count; i++)
            {
                var spin = new SpinWait();
                while (Volatile.Read(ref completed) < targets[i])
                {
                    spin.SpinOnce();
                }
                string dir = $"{Parent}/ckpt{i}";
                int before = Volatile.Read(ref completed);
                Volatile.Write(ref started, i + 1); // releases the writer
                db.CreateCheckpoint(dir, s_flushRules[i % s_flushRules.Length]);
                int after = Math.Min(ops.Count, Volatile.Read(ref completed) + 1); // one write may be in flight
                taken.Add((dir, before, after));
            }
            writer.Join();
            Assert.Null(writerError);
        }
        var contents = taken.ConvertAll(t => ReadCheckpoint(fs, t.Dir, readOnly: false));
        var matched = new bool[taken.Count];
        SortedDictionary<string, string>[] model = NewModel();
        for (int k = 0; k <= ops.Count; k++)
        {
            for (int c = 0; c < taken.Count; c++)
            {
                if (!matched[c] && k >= taken[c].Before && k <= taken[c].After && Same(model, contents[c]))
                {
                    matched[c] = true;
                }
            }
            if (k < ops.Count)
            {
                Apply(model, ops[k]);
            }
        }
        for (int c = 0; c < taken.Count; c++)
        {
            Assert.True(matched[c], $"checkpoint {c} (taken after op {taken[c].Before}, returned before op {taken[c].After}) equals no prefix of history in that window");
        }
    }
}
