using KvEngine.Storage;
using static KvEngine.Tests.Db.DbTestUtil;

namespace KvEngine.Tests.Db.Ingestion;

/// <summary>
/// Property test of IngestExternalFile against an in-memory model: random SstFileWriter files
/// (puts, deletes, merges, range deletions) ingested between random writes, flushes, compactions,
/// snapshots and reopens. An ingested file's entries are newer than everything written before it
/// (its range deletions cover only older data, as they share the file's sequence number); files
/// of one call apply in the order of their smallest keys; snapshots taken before an ingestion do
/// not see it.
/// </summary>
public class IngestModelTests
{
    private const string External = "/kvtest/ext";
    private const int KeySpace = 60;

    private static KvOptions Options(FaultInjectionFileSystem fs, bool autoCompactions) => new()
    {
        FileSystem = fs,
        WriteBufferSize = 8 << 10,
        MaxWriteBufferNumber = 3,
        MergeOperator = new StringAppendOperator(),
        DisableAutoCompactions = !autoCompactions,
        Level0FileNumCompactionTrigger = 3,
        MaxBytesForLevelBase = 32 << 10,
        TargetFileSizeBase = 8 << 10,
    };

    private static string Key(int i) => $"key{i:D3}";

    private static void Merge(SortedDictionary<string, string> model, string key, string operand) =>
        model[key] = model.TryGetValue(key, out string? old) ? old + "," + operand : operand;

    private static void DeleteRange(SortedDictionary<string, string> model, string begin, string end)
    {
        foreach (string k in model.Keys.Where(k => string.CompareOrdinal(k, begin) >= 0 && string.CompareOrdinal(k, end) < 0).ToList())
        {
            model.Remove(k);
        }
    }

    /// <summary>One generated file: its point entries (0 put, 1 delete, 2 merge) and range deletions.</summary>
    private sealed record GeneratedFile(string Path, SortedDictionary<string, (int Kind, string Value)> Points, List<(string Begin, string End)> Ranges)
    {
        /// <summary>The file's smallest key as ingestion sorts files: user key, then a range deletion before a point entry.</summary>
        public (string Key, int Rank) Smallest
        {
            get
            {
                (string Key, int Rank)? best = Points.Count > 0 ? (Points.Keys.First(), 1) : null;
                foreach ((string begin, string _) in Ranges)
                {
                    if (best == null || string.CompareOrdinal(begin, best.Value.Key) <= 0)
                    {
                        best = (begin, 0);
                    }
                }
                return best!.Value;
            }
        }
    }

    private static GeneratedFile Generate(IFileSystem fs, Random rng, string name, int step)
    {
        var points = new SortedDictionary<string, (int, string)>(StringComparer.Ordinal);
        var ranges = new List<(string, string)>();
        int lo = rng.Next(KeySpace);
        int width = 1 + rng.Next(KeySpace / 3);
        int count = 1 + rng.Next(12);
        for (int i = 0; i < count; i++)
        {
            int k = Math.Min(KeySpace - 1, lo + rng.Next(width));
            int kind = rng.Next(10) switch { < 6 => 0, < 8 => 1, _ => 2 };
            points[Key(k)] = (kind, $"{name}.{step}.{k}");
        }
        if (rng.Next(4) == 0)
        {
            int b = lo + rng.Next(width);
            ranges.Add((Key(b), Key(b + 1 + rng.Next(6))));
        }
        if (!fs.DirectoryExists(External))
        {
            fs.CreateDirectory(External);
        }
        string path = $"{External}/{name}.sst";
        using var writer = new SstFileWriter(new ColumnFamilyOptions { BlockSize = 256 }, fs, SstFileWriter.UnknownColumnFamilyId, "");
        writer.Open(path);
        foreach ((string key, (int kind, string value)) in points)
        {
            switch (kind)
            {
                case 0: writer.Put(B(key), B(value)); break;
                case 1: writer.Delete(B(key)); break;
                default: writer.Merge(B(key), B(value)); break;
            }
        }
        foreach ((string begin, string end) in ranges)
        {
            writer.DeleteRange(B(begin), B(end));
        }
        writer.Finish();
        return new GeneratedFile(path, points, ranges);
    }

    private static void Apply(SortedDictionary<string, string> model, GeneratedFile f)
    {
        foreach ((string begin, string end) in f.Ranges)
        {
            DeleteRange(model, begin, end); // covers only what is older than the file
        }
        foreach ((string key, (int kind, string value)) in f.Points)
        {
            switch (kind)
            {
                case 0: model[key] = value; break;
                case 1: model.Remove(key); break;
                default: Merge(model, key, value); break;
            }
        }
    }

    private static void Check(KvDb db, SortedDictionary<string, string> model, Snapshot? snapshot, string context)
    {
        var options = snapshot == null ? null : new ReadOptions { Snapshot = snapshot };
        SortedDictionary<string, string> actual = ReadAll(db, options);
        if (!actual.SequenceEqual(model))
        {
            string diff = string.Join(", ", model.Keys.Union(actual.Keys).Distinct().Order(StringComparer.Ordinal)
                .Where(k => !model.TryGetValue(k, out string? m) || !actual.TryGetValue(k, out string? a) || m != a)
                .Take(8).Select(k => $"{k}: model={model.GetValueOrDefault(k) ?? "-"} db={actual.GetValueOrDefault(k) ?? "-"}"));
            Assert.Fail($"{context}: {diff}");
        }
        for (int i = 0; i < KeySpace; i += 7)
        {
            byte[]? v = db.Get(B(Key(i)), options);
            Assert.Equal(model.GetValueOrDefault(Key(i)), v == null ? null : S(v));
        }
    }

    [Theory]
    [InlineData(1, false)]
    [InlineData(2, true)]
    [InlineData(3, false)]
    [InlineData(4, true)]
    public void IngestionsInterleavedWithWritesMatchTheModel(int seed, bool autoCompactions)
    {
        var rng = new Random(seed);
        FaultInjectionFileSystem fs = NewFs();
        var model = new SortedDictionary<string, string>(StringComparer.Ordinal);
        var snapshots = new List<(Snapshot Snapshot, SortedDictionary<string, string> Model)>();
        KvDb db = KvDb.Open(DbPath, Options(fs, autoCompactions));
        int fileCounter = 0;
        int ingested = 0;
        try
        {
            for (int step = 0; step < 400; step++)
            {
                int op = rng.Next(100);
                string context = $"seed {seed} step {step}";
                if (op < 40)
                {
                    string k = Key(rng.Next(KeySpace));
                    string v = $"w{step}";
                    switch (rng.Next(10))
                    {
                        case < 6: db.Put(B(k), B(v)); model[k] = v; break;
                        case < 8: db.Delete(B(k)); model.Remove(k); break;
                        default: db.Merge(B(k), B(v)); Merge(model, k, v); break;
                    }
                }
                else if (op < 43)
                {
                    int b = rng.Next(KeySpace);
                    string begin = Key(b), end = Key(b + 1 + rng.Next(5));
                    db.DeleteRange(B(begin), B(end));
                    DeleteRange(model, begin, end);
                }
                else if (op < 70)
                {
                    int files = rng.Next(3) == 0 ? 2 + rng.Next(2) : 1;
                    var generated = new List<GeneratedFile>();
                    while (generated.Count < files)
                    {
                        GeneratedFile g = Generate(fs, rng, $"f{fileCounter++}", step);
                        if (generated.All(x => x.Smallest.Key != g.Smallest.Key))
                        {
                            generated.Add(g);
                        }
                    }
                    var options = new IngestExternalFileOptions { MoveFiles = rng.Next(2) == 0, WriteGlobalSeqno = rng.Next(3) != 0 };
                    db.IngestExternalFile(generated.Select(g => g.Path).ToList(), options);
                    ingested += files;
                    foreach (GeneratedFile g in generated.OrderBy(g => g.Smallest.Key, StringComparer.Ordinal))
                    {
                        Apply(model, g);
                    }
                }
                else if (op < 76)
                {
                    db.Flush();
                }
                else if (op < 80)
                {
                    db.CompactRange(null, null);
                }
                else if (op < 85)
                {
                    snapshots.Add((db.GetSnapshot(), new SortedDictionary<string, string>(model, StringComparer.Ordinal)));
                }
                else if (op < 89 && snapshots.Count > 0)
                {
                    int i = rng.Next(snapshots.Count);
                    Check(db, snapshots[i].Model, snapshots[i].Snapshot, context + " snapshot");
                    snapshots[i].Snapshot.Dispose();
                    snapshots.RemoveAt(i);
                }
                else if (op < 92)
                {
                    foreach ((Snapshot s, SortedDictionary<string, string> _) in snapshots)
                    {
                        s.Dispose();
                    }
                    snapshots.Clear();
                    db.Dispose();
                    db = KvDb.Open(DbPath, Options(fs, autoCompactions));
                    Check(db, model, null, context + " after reopen");
                }
                if (step % 10 == 0 || op >= 92)
                {
                    Check(db, model, null, context);
                }
            }
            Check(db, model, null, $"seed {seed} end");
            foreach ((Snapshot s, SortedDictionary<string, string> m) in snapshots)
            {
                Check(db, m, s, $"seed {seed} end snapshot");
            }
            db.CompactRange(null, null);
            Check(db, model, null, $"seed {seed} after full compaction");
            Assert.True(ingested > 50, $"only {ingested} files ingested");
        }
        finally
        {
            foreach ((Snapshot s, SortedDictionary<string, string> _) in snapshots)
            {
                s.Dispose();
            }
            db.Dispose();
        }
    }
}
