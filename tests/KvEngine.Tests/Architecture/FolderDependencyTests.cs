using System.Text;
using Xunit.Abstractions;

namespace KvEngine.Tests.Architecture;

/// <summary>
/// The engine's folders (one namespace each) depend on each other without cycles, so each
/// subsystem can be read, tested and changed from the bottom up (the public API at the namespace
/// root is the one exception: it is the facade over all of them, and its option and exception
/// types are used everywhere). Inside Db/ each sub-folder is a namespace of its own, in layers:
/// the composition root (DbImpl) on top, then the operations, then error handling, statistics and
/// the WALs, then the shared state; an edge may point down or sideways, never up, and nothing
/// outside Db/ uses Db/. The graph comes from the compiled code
/// (<see cref="NamespaceDependencyGraph"/>), so a fully qualified name cannot hide an edge.
/// </summary>
public sealed class FolderDependencyTests(ITestOutputHelper output)
{
    /// <summary>Db's namespaces, top layer first.</summary>
    private static readonly string[][] s_dbLayers =
    [
        ["Db"], // the composition root: DbImpl and the dispatch of each operation
        ["Db.Read", "Db.Write", "Db.Background", "Db.Recovery", "Db.Checkpoints", "Db.Ingestion"],
        ["Db.Errors", "Db.Stats", "Db.Logs"],
        ["Db.State"], // families, memtable lists, read states, snapshots, the database mutex
    ];

    /// <summary>
    /// Edges that break the layers, each with what removes it: none today. The test fails when one
    /// appears that is not listed, and when a listed one is gone (then delete it here).
    /// </summary>
    private static readonly (string From, string To, string RemovedBy)[] s_knownExceptions = [];

    [Fact]
    public void EngineFoldersHaveNoDependencyCycles()
    {
        NamespaceDependencyGraph graph = Graph();
        List<List<string>> cycles = graph.Cycles(s_knownExceptions.Select(e => (e.From, e.To)));
        var why = new StringBuilder();
        foreach (List<string> component in cycles)
        {
            why.Append("cycle among ").AppendJoin(", ", component).AppendLine(":");
            foreach (string from in component)
            {
                foreach (string to in component)
                {
                    foreach (string reason in graph.Reasons(from, to).Order(StringComparer.Ordinal).Take(4))
                    {
                        why.Append("  ").Append(from).Append(" -> ").Append(to).Append(": ").AppendLine(reason);
                    }
                }
            }
        }
        Assert.True(cycles.Count == 0, why.ToString());
    }

    [Fact]
    public void DbLayersPointDownOnly()
    {
        NamespaceDependencyGraph graph = Graph();
        var found = new SortedSet<string>(StringComparer.Ordinal);
        var why = new StringBuilder();
        foreach ((string from, Dictionary<string, HashSet<string>> outs) in graph.Edges)
        {
            foreach (string to in outs.Keys)
            {
                if (Breaks(from, to))
                {
                    found.Add(from + " -> " + to);
                    why.Append("  ").Append(from).Append(" -> ").Append(to).Append(": ")
                        .AppendJoin("; ", graph.Reasons(from, to).Order(StringComparer.Ordinal).Take(3)).AppendLine();
                }
            }
        }
        var known = new SortedSet<string>(s_knownExceptions.Select(e => e.From + " -> " + e.To), StringComparer.Ordinal);
        var added = new SortedSet<string>(found.Except(known), StringComparer.Ordinal);
        var gone = new SortedSet<string>(known.Except(found), StringComparer.Ordinal);
        Assert.True(added.Count == 0 && gone.Count == 0,
            $"edges against the Db layers not in the known list: {string.Join(", ", added)}\n" +
            $"known exceptions that no longer exist (delete them from the list): {string.Join(", ", gone)}\n{why}");
    }

    /// <summary>
    /// The model's own check: a layer list that allowed an upward edge, or a graph that dropped the
    /// Db split, would pass anything; these fixed edges must be judged as the rules say.
    /// </summary>
    [Fact]
    public void TheLayerRulesJudgeEdgesAsStated()
    {
        Assert.False(Breaks("Db", "Db.Read"));
        Assert.False(Breaks("Db.Write", "Db.Background")); // sideways, within a layer
        Assert.False(Breaks("Db.Background", "Db.State"));
        Assert.False(Breaks("Db.State", "Versions"));
        Assert.True(Breaks("Db.State", "Db.Errors"));
        Assert.True(Breaks("Db.Read", "Db"));
        Assert.True(Breaks("Versions", "Db.State"));
        NamespaceDependencyGraph graph = Graph();
        Assert.Contains("Db.State", graph.Edges["Db"].Keys); // the split is on: Db's sub-folders are nodes
        Assert.Contains("Versions", graph.Edges["Db.State"].Keys);
    }

    private NamespaceDependencyGraph Graph()
    {
        var graph = new NamespaceDependencyGraph(typeof(KvDb).Assembly, "KvEngine", "Db");
        var text = new StringBuilder();
        foreach (KeyValuePair<string, Dictionary<string, HashSet<string>>> e in graph.Edges.OrderBy(e => e.Key, StringComparer.Ordinal))
        {
            text.Append(e.Key).Append(" -> ").AppendJoin(' ', e.Value.Keys.Order(StringComparer.Ordinal)).AppendLine();
        }
        output.WriteLine(text.ToString());
        return graph;
    }

    /// <summary>True when an edge from <paramref name="from"/> to <paramref name="to"/> goes against the Db layers.</summary>
    private static bool Breaks(string from, string to)
    {
        int toLayer = Layer(to);
        if (toLayer < 0)
        {
            return false; // below Db: anything may use the engine's other folders (cycles are the other test's)
        }
        int fromLayer = Layer(from);
        return fromLayer < 0 || fromLayer > toLayer;
    }

    /// <summary>The layer of a Db namespace (0 = top), -1 for a namespace outside Db; a Db namespace missing from the list fails.</summary>
    private static int Layer(string ns)
    {
        if (ns != "Db" && !ns.StartsWith("Db.", StringComparison.Ordinal))
        {
            return -1;
        }
        for (int i = 0; i < s_dbLayers.Length; i++)
        {
            if (s_dbLayers[i].Contains(ns))
            {
                return i;
            }
        }
        throw new InvalidOperationException($"{ns} is in no Db layer: add it to the list.");
    }
}
