using System.Text;
using Xunit.Abstractions;

namespace KvEngine.Tests.Architecture;

/// <summary>
/// The engine's folders (one namespace each) depend on each other without cycles, so each
/// subsystem can be read, tested and changed from the bottom up (the public API at the namespace
/// root is the one exception: it is the facade over all of them, and its option and exception
/// types are used everywhere). The graph comes from the compiled code
/// (<see cref="NamespaceDependencyGraph"/>), so a fully qualified name cannot hide an edge.
/// </summary>
public sealed class FolderDependencyTests(ITestOutputHelper output)
{
    [Fact]
    public void EngineFoldersHaveNoDependencyCycles()
    {
        var graph = new NamespaceDependencyGraph(typeof(KvDb).Assembly, "KvEngine");
        var text = new StringBuilder();
        foreach (KeyValuePair<string, Dictionary<string, HashSet<string>>> e in graph.Edges.OrderBy(e => e.Key, StringComparer.Ordinal))
        {
            text.Append(e.Key).Append(" -> ").AppendJoin(' ', e.Value.Keys.Order(StringComparer.Ordinal)).AppendLine();
        }
        output.WriteLine(text.ToString());

        List<List<string>> cycles = graph.Cycles();
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
}
