namespace KvEngine.Tests.Architecture;

/// <summary>
/// Every repository path the documentation names exists: README.md, docs/**/*.md and the other
/// README.md files, through <see cref="DocPathScanner"/> (code spans, code blocks and relative
/// links). A file moved or deleted without its mention being fixed fails here, naming the
/// document, line and path. The scanner's own rules are pinned by the tests over planted
/// documents below, so the scan of the real docs cannot pass by finding nothing.
/// </summary>
public sealed class DocPathTests : IDisposable
{
    private readonly string _root = DocPathScanner.FindRepositoryRoot(AppContext.BaseDirectory);
    private readonly string _scratch = Path.Combine(Path.GetTempPath(), "kvengine-docpaths-" + Guid.NewGuid().ToString("N"));

    public void Dispose()
    {
        if (Directory.Exists(_scratch))
        {
            Directory.Delete(_scratch, recursive: true);
        }
    }

    [Fact]
    public void EveryPathNamedInTheDocsExists()
    {
        var scanner = new DocPathScanner(_root, DocPathScanner.FindProjectFolders(_root));
        List<string> documents = DocPathScanner.FindDocuments(_root);
        Assert.Contains(documents, d => d.EndsWith(Path.Combine("docs", "design.md"), StringComparison.Ordinal));

        List<string> missing = documents.SelectMany(scanner.MissingPaths).ToList();
        Assert.True(missing.Count == 0, "paths named in the docs that do not exist:\n" + string.Join('\n', missing));
    }

    [Fact]
    public void APlantedBadPathIsReportedWithItsDocumentAndLine()
    {
        string doc = PlantDocument(
            "# Planted",
            "Code: `src/KvEngine/KvDb.cs` and `Db/DbImpl.cs` (engine-relative), [design](../design.md).",
            "Stale: `src/KvEngine/Manifest/VersionEdit.cs`, `Db/WalTracker.cs` and [gone](gone.md).",
            "```sh",
            "benchmarks/scripts/no_such_script.sh --runs 3",
            "```",
            "Not checked: `util/filter_bench.cc`, `docs/data/<topic>/`, `/proc/self/statm`, `../shared/bench/compare.py`.");

        var scanner = new DocPathScanner(_root, DocPathScanner.FindProjectFolders(_root));
        List<string> missing = scanner.MissingPaths(doc);

        string name = Path.GetRelativePath(_root, doc).Replace('\\', '/');
        Assert.Equal(
            [
                $"{name}:3: src/KvEngine/Manifest/VersionEdit.cs",
                $"{name}:3: Db/WalTracker.cs",
                $"{name}:3: gone.md",
                $"{name}:5: benchmarks/scripts/no_such_script.sh",
            ],
            missing);
    }

    [Fact]
    public void RepositoryRootIsFoundFromTheTestsBaseDirectory()
    {
        Assert.True(File.Exists(Path.Combine(_root, "KvEngine.sln")));
        Assert.True(Directory.Exists(Path.Combine(_root, "src", "KvEngine")));
    }

    // The planted document sits in a scratch folder outside the repository, beside a design.md
    // its relative link finds; repository paths in it resolve against the real root.
    private string PlantDocument(params string[] lines)
    {
        string folder = Path.Combine(_scratch, "docs");
        Directory.CreateDirectory(folder);
        File.WriteAllText(Path.Combine(_scratch, "design.md"), "# Design\n");
        string doc = Path.Combine(folder, "planted.md");
        File.WriteAllLines(doc, lines);
        return doc;
    }
}
