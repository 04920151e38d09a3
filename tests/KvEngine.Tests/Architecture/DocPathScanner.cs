using System.Text.RegularExpressions;

namespace KvEngine.Tests.Architecture;

/// <summary>
/// Finds the repository paths a Markdown document names and reports those that do not exist.
/// A path is named by a Markdown link or image to a relative target (resolved against the
/// document's folder), or by a word inside a code span or a fenced code block that is either
/// rooted at a top-level folder (<c>src/</c>, <c>tests/</c>, <c>benchmarks/</c>, <c>docs/</c>,
/// <c>samples/</c>; resolved against the repository root) or a relative path of at least one
/// folder and either a file extension of this repository's kinds or a final <c>/</c> (resolved against the
/// document's folder, the root and every project folder, since the docs name engine files as
/// <c>Db/Read/PointReader.cs</c>). Words with placeholders (<c>&lt;</c>, <c>*</c>, <c>{</c>,
/// <c>$</c>, <c>|</c>, <c>...</c>), absolute paths, paths that start with a dot (outside the tree or
/// build scratch) and build output (<c>bin/</c>, <c>obj/</c>) are not checked. Stateless apart
/// from the root and project folders it is given; not thread-affine.
/// </summary>
internal sealed partial class DocPathScanner
{
    private static readonly string[] s_rootedPrefixes = ["src/", "tests/", "benchmarks/", "docs/", "samples/"];

    // Extensions of files this repository holds; RocksDB's own sources (.cc, .h) are named in
    // the docs too and are not ours to check.
    private static readonly HashSet<string> s_checkedExtensions = new(StringComparer.Ordinal)
    {
        ".cs", ".md", ".sh", ".py", ".csproj", ".props", ".sln", ".txt", ".tsv", ".json", ".png",
        ".lua", ".c", ".log",
    };

    private readonly string _root;
    private readonly IReadOnlyList<string> _projectFolders;

    public DocPathScanner(string root, IReadOnlyList<string> projectFolders)
    {
        _root = root;
        _projectFolders = projectFolders;
    }

    /// <summary>Walks up from <paramref name="start"/> to the folder holding KvEngine.sln.</summary>
    public static string FindRepositoryRoot(string start)
    {
        for (DirectoryInfo? dir = new(start); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "KvEngine.sln")))
            {
                return dir.FullName;
            }
        }
        throw new InvalidOperationException($"no KvEngine.sln above {start}");
    }

    /// <summary>Every folder under the root's top-level folders that holds a project file.</summary>
    public static List<string> FindProjectFolders(string root)
    {
        var folders = new List<string>();
        foreach (string top in s_rootedPrefixes)
        {
            string dir = Path.Combine(root, top.TrimEnd('/'));
            if (!Directory.Exists(dir))
            {
                continue;
            }
            foreach (string project in Directory.EnumerateFiles(dir, "*.csproj", SearchOption.AllDirectories))
            {
                if (!IsBuildOutput(Path.GetRelativePath(root, project)))
                {
                    folders.Add(Path.GetDirectoryName(project)!);
                }
            }
        }
        return folders;
    }

    /// <summary>The documents whose paths are checked: README.md, docs/**/*.md and every other README.md.</summary>
    public static List<string> FindDocuments(string root)
    {
        var docs = new List<string> { Path.Combine(root, "README.md") };
        docs.AddRange(Directory.EnumerateFiles(Path.Combine(root, "docs"), "*.md", SearchOption.AllDirectories));
        foreach (string top in new[] { "src", "tests", "benchmarks", "samples" })
        {
            string dir = Path.Combine(root, top);
            if (Directory.Exists(dir))
            {
                docs.AddRange(Directory.EnumerateFiles(dir, "README.md", SearchOption.AllDirectories)
                    .Where(f => !IsBuildOutput(Path.GetRelativePath(root, f))));
            }
        }
        docs.Sort(StringComparer.Ordinal);
        return docs;
    }

    /// <summary>"file:line: path" for every path <paramref name="document"/> names that does not exist.</summary>
    public List<string> MissingPaths(string document)
    {
        var missing = new List<string>();
        string docFolder = Path.GetDirectoryName(document)!;
        string relativeDoc = Path.GetRelativePath(_root, document).Replace('\\', '/');
        string[] lines = File.ReadAllLines(document);
        bool inFence = false;
        for (int i = 0; i < lines.Length; i++)
        {
            string line = lines[i];
            if (line.TrimStart().StartsWith("```", StringComparison.Ordinal))
            {
                inFence = !inFence;
                continue;
            }
            var named = new List<(string Path, bool IsLink)>();
            if (inFence)
            {
                named.AddRange(Words(line).Select(w => (w, false)));
            }
            else
            {
                foreach (Match span in CodeSpan().Matches(line))
                {
                    named.AddRange(Words(span.Groups[1].Value).Select(w => (w, false)));
                }
                string prose = CodeSpan().Replace(line, " ");
                foreach (Match link in LinkTarget().Matches(prose))
                {
                    named.Add((link.Groups[1].Value, true));
                }
            }
            foreach ((string path, bool isLink) in named)
            {
                if (!Exists(path, isLink, docFolder))
                {
                    missing.Add($"{relativeDoc}:{i + 1}: {path}");
                }
            }
        }
        return missing;
    }

    private bool Exists(string path, bool isLink, string docFolder)
    {
        if (isLink)
        {
            string target = path;
            int anchor = target.IndexOf('#', StringComparison.Ordinal);
            if (anchor >= 0)
            {
                target = target[..anchor];
            }
            if (target.Length == 0 || target.Contains("://", StringComparison.Ordinal) || target.StartsWith("mailto:", StringComparison.Ordinal))
            {
                return true;
            }
            return ExistsUnder(docFolder, target);
        }
        if (s_rootedPrefixes.Any(p => path.StartsWith(p, StringComparison.Ordinal)))
        {
            return ExistsUnder(_root, path);
        }
        if (ExistsUnder(docFolder, path) || ExistsUnder(_root, path))
        {
            return true;
        }
        return _projectFolders.Any(folder => ExistsUnder(folder, path));
    }

    private static bool ExistsUnder(string folder, string relative)
    {
        string full = Path.GetFullPath(Path.Combine(folder, relative.TrimEnd('/')));
        return relative.EndsWith('/') ? Directory.Exists(full) : File.Exists(full) || Directory.Exists(full);
    }

    /// <summary>The words of a code span or code line that name a repository path to check.</summary>
    private static IEnumerable<string> Words(string text)
    {
        foreach (string raw in text.Split([' ', '\t', ';', '(', '"'], StringSplitOptions.RemoveEmptyEntries))
        {
            string word = raw.Trim('`', '"', '\'', '(', ')', ',', ';', ':', '.');
            int assignment = word.LastIndexOf('=');
            if (assignment >= 0)
            {
                word = word[(assignment + 1)..];
            }
            if (word.Length == 0 || word.IndexOfAny(['<', '>', '*', '{', '}', '$', '|', '?', '[', ']', '\\']) >= 0
                || word.Contains("...", StringComparison.Ordinal) || word[0] is '/' or '.' or '~' or '-'
                || word.Contains("://", StringComparison.Ordinal) || IsBuildOutput(word))
            {
                continue;
            }
            if (s_rootedPrefixes.Any(p => word.StartsWith(p, StringComparison.Ordinal)))
            {
                yield return word;
                continue;
            }
            int slash = word.IndexOf('/', StringComparison.Ordinal);
            if (slash <= 0 || slash == word.Length - 1)
            {
                continue;
            }
            if (word.EndsWith('/') || s_checkedExtensions.Contains(Path.GetExtension(word)))
            {
                yield return word;
            }
        }
    }

    private static bool IsBuildOutput(string path)
    {
        string p = "/" + path.Replace('\\', '/');
        return p.Contains("/bin/", StringComparison.Ordinal) || p.Contains("/obj/", StringComparison.Ordinal);
    }

    [GeneratedRegex("`([^`]+)`")]
    private static partial Regex CodeSpan();

    [GeneratedRegex(@"\]\(([^)\s]+)(?:\s+""[^""]*"")?\)")]
    private static partial Regex LinkTarget();
}
