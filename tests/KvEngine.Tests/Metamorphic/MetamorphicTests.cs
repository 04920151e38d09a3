using System.Globalization;

namespace KvEngine.Tests.Metamorphic;

/// <summary>
/// The metamorphic test (Pebble's): one random op log per seed — writes, batches across families,
/// merges, single deletes, range deletions, ingested files, snapshots, reads, iterators, flushes,
/// compactions, reopens and checkpoints — runs under every configuration of
/// <see cref="MetaConfigs"/> and under the in-memory model, and every read must agree everywhere.
/// The short form runs here; KVENGINE_METAMORPHIC_SEEDS (count), KVENGINE_METAMORPHIC_FIRST_SEED and
/// KVENGINE_METAMORPHIC_OPS make the long one, KVENGINE_METAMORPHIC_REPLAY replays a written op log
/// (docs/design.md, "Stress and crash testing").
/// </summary>
public sealed class MetamorphicTests
{
    private const int ShortSeeds = 4;
    private const int ShortOps = 1200;

    /// <summary>A hand-written log reaching every operation and the corner cases of each.</summary>
    private const string EveryOperation = """
        # every operation kind and their corner cases
        families 3
        merge stringappend
        put 0 apa1 v1
        put 0 apa2 v2~300
        put 1 apa1 other
        merge 0 apa1 m1
        merge 0 bob m2
        put 0 sdk1 v3
        snapshot s0
        singledelete 0 sdk1
        deleterange 0 apa2 apa3
        batch put 0 cat1 v4 | merge 1 cat1 m5 | delete 0 apa1 | put 2 dog7 v6~5000 | deleterange 1 a b | put 0 sdk2 v7 | singledelete 0 sdk2
        flush all
        get 0 apa1 -
        get 0 apa1 s0
        get 0 sdk1 s0
        get 0 sdk1 -
        get 0 sdk2 -
        multiget 0 - apa1 apa2 bob cat1 sdk1 apa1
        multiget 0 s0 apa1 apa2 bob cat1 sdk1
        ingest 0 deleterange 0 bob bod | put 0 bob1 v8 | merge 0 cat1 m9 | delete 0 dog
        get 0 bob -
        get 0 cat1 -
        iter i0 0 - apa cat1 total
        first i0
        next i0
        next i0
        next i0
        next i0
        last i0
        prev i0
        seek i0 b
        seekforprev i0 bz
        seek i0 zzz
        next i0
        iter i1 0 s0 - - prefix
        seek i1 apa
        next i1
        next i1
        next i1
        seekforprev i1 bob~
        first i1
        next i1
        iter i2 2 - - - total
        last i2
        closeiter i0
        closeiter i1
        closeiter i2
        compact 0 - -
        compact 1 a c
        flush 1
        scan 0 -
        rscan 1 -
        scan 0 s0
        checkpoint
        release s0
        reopen
        scan 0 -
        scan 1 -
        scan 2 -
        """;

    public static TheoryData<int> Seeds()
    {
        var data = new TheoryData<int>();
        int count = EnvInt("KVENGINE_METAMORPHIC_SEEDS", ShortSeeds);
        int first = EnvInt("KVENGINE_METAMORPHIC_FIRST_SEED", 1);
        for (int s = first; s < first + count; s++)
        {
            data.Add(s);
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Seeds))]
    public void EveryConfigurationReadsTheSame(int seed)
    {
        MetaLog log = MetaGenerator.Generate(seed, EnvInt("KVENGINE_METAMORPHIC_OPS", ShortOps));
        string? failure = MetaCheck.Run(log, MetaCheck.SelectedConfigs(), "seed-" + seed.ToString(CultureInfo.InvariantCulture));
        Assert.True(failure == null, failure);
    }

    [Fact]
    public void ReplaysAnOpLog()
    {
        string? path = Environment.GetEnvironmentVariable("KVENGINE_METAMORPHIC_REPLAY");
        MetaLog log = MetaLog.Parse(string.IsNullOrEmpty(path) ? EveryOperation : File.ReadAllText(path));
        string? failure = MetaCheck.Run(log, MetaCheck.SelectedConfigs(), "replay");
        Assert.True(failure == null, failure);
    }

    /// <summary>
    /// Cuts an op log down to the operations its failure needs: by default the hand-written log
    /// under a configuration that drops one merge (the merge and a read of its key remain,
    /// with the snapshot the read uses); with KVENGINE_METAMORPHIC_REDUCE=&lt;file&gt;, that log under the selected
    /// configurations, written to &lt;file&gt;.reduced and shown in the failure.
    /// </summary>
    [Fact]
    public void ReducesAFailingOpLog()
    {
        string? path = Environment.GetEnvironmentVariable("KVENGINE_METAMORPHIC_REDUCE");
        if (string.IsNullOrEmpty(path))
        {
            MetaConfig dropper = new() { Name = "drops-merge-m1", DropWrite = op => op.Value == "m1" };
            MetaLog reduced = MetaReducer.Reduce(MetaLog.Parse(EveryOperation), l => Diverges(l, [dropper]));
            Assert.True(MetaReducer.IsWellFormed(reduced));
            Assert.True(Diverges(reduced, [dropper]));
            Assert.InRange(reduced.Ops.Count, 2, 3);
            Assert.Equal("merge 0 apa1 m1", reduced.Ops[0].ToString());
            Assert.StartsWith("get 0 apa1 ", reduced.Ops[^1].ToString(), StringComparison.Ordinal);
            return;
        }
        IReadOnlyList<MetaConfig> configs = MetaCheck.SelectedConfigs();
        MetaLog log = MetaLog.Parse(File.ReadAllText(path));
        Assert.True(Diverges(log, configs), "the log does not fail under these configurations");
        MetaLog small = MetaReducer.Reduce(log, l => Diverges(l, configs));
        File.WriteAllText(path + ".reduced", small.ToText());
        Assert.Fail($"reduced from {log.Ops.Count} to {small.Ops.Count} operations ({path}.reduced):\n{small.ToText()}\n{MetaCheck.Run(small, configs, null)}");
    }

    private static bool Diverges(MetaLog log, IReadOnlyList<MetaConfig> configs) =>
        MetaCheck.Run(log, configs, null) is { } failure && failure.Contains("results differ", StringComparison.Ordinal);

    [Fact]
    public void OpLogTextRoundTrips()
    {
        MetaLog log = MetaGenerator.Generate(17, 3000);
        string text = log.ToText();
        Assert.Equal(text, MetaLog.Parse(text).ToText());
        Assert.Equal(text, MetaGenerator.Generate(17, 3000).ToText());
        Assert.NotEqual(text, MetaGenerator.Generate(18, 3000).ToText());
        string every = MetaLog.Parse(EveryOperation).ToText();
        Assert.Equal(every, MetaLog.Parse(every).ToText());
        // Every kind of operation appears in a generated log of this length, and in the hand-written one.
        foreach (MetaOpKind kind in Enum.GetValues<MetaOpKind>())
        {
            Assert.Contains(log.Ops, o => o.Kind == kind || (o.Records?.Any(r => r.Kind == kind) ?? false));
            Assert.Contains(MetaLog.Parse(EveryOperation).Ops, o => o.Kind == kind || (o.Records?.Any(r => r.Kind == kind) ?? false));
        }
        Assert.Throws<FormatException>(() => MetaLog.Parse("families 1\nmerge uint64add\nput 0 k\n"));
        Assert.Throws<FormatException>(() => MetaLog.Parse("families 1\nmerge uint64add\nfrobnicate 0 k\n"));
        Assert.Throws<FormatException>(() => MetaLog.Parse("put 0 k v\n"));
    }

    /// <summary>The check itself: a configuration that silently drops one write is caught at the first read that sees it.</summary>
    [Fact]
    public void CatchesAConfigurationThatDiverges()
    {
        MetaLog log = MetaLog.Parse(EveryOperation);
        MetaConfig dropper = new() { Name = "drops-merge-m1", DropWrite = op => op.Value == "m1" };
        string? failure = MetaCheck.Run(log, [MetaConfigs.All[0], dropper], "self-test");
        Assert.NotNull(failure);
        Assert.Contains("op 12 `get 0 apa1 s0`", failure, StringComparison.Ordinal);
        Assert.Contains("[model, default] read: v1,m1", failure, StringComparison.Ordinal);
        Assert.Contains("[drops-merge-m1] read: v1", failure, StringComparison.Ordinal);
        Assert.True(File.Exists(Path.Combine(MetaCheck.OutputDirectory, "self-test.log")));

        // Every configuration wrong the same way: reported as a disagreement with the model.
        string? common = MetaCheck.Run(log, [dropper], "self-test-common");
        Assert.NotNull(common);
        Assert.Contains("every configuration disagrees with the model", common, StringComparison.Ordinal);
    }

    /// <summary>
    /// The short form is not vacuous: a log of its length holds a few hundred live keys and leaves
    /// a tiny configuration's tables spread over several levels, so reads go through memtables,
    /// level 0 and deeper levels alike.
    /// </summary>
    [Fact]
    public void ShortLogsReachDeepLevels()
    {
        MetaLog log = MetaGenerator.Generate(1, ShortOps);
        string[] model;
        using (var m = new MetaModel(log))
        {
            model = MetaExecutor.Run(log, m);
        }
        int keys = int.Parse(model[^1].AsSpan(0, model[^1].IndexOf(' ', StringComparison.Ordinal)), CultureInfo.InvariantCulture);
        Assert.True(keys >= 100, $"the last family holds {keys} keys at the end");
        using var target = new DbTarget(log, MetaConfigs.All.First(c => c.Name == "tiny-none"));
        MetaExecutor.Run(log, target);
        string levels = target.Levels();
        Assert.Matches("L[2-6] ", levels);
    }

    private static int EnvInt(string name, int fallback) =>
        int.TryParse(Environment.GetEnvironmentVariable(name), NumberStyles.Integer, CultureInfo.InvariantCulture, out int v) && v > 0 ? v : fallback;
}
