using KvEngine.Fuzz.Targets;

namespace KvEngine.Fuzz;

/// <summary>Runs saved inputs (crash files, corpora) through a target without a fuzzer and prints each finding.</summary>
internal static class Replay
{
    /// <summary>Returns 0 when every input passed, 1 when any was a finding.</summary>
    public static int Run(string target, ReadOnlySpan<string> paths)
    {
        int inputs = 0;
        int findings = 0;
        int rejected = 0;
        foreach (string path in paths)
        {
            IEnumerable<string> files = Directory.Exists(path)
                ? Directory.EnumerateFiles(path, "*", SearchOption.AllDirectories).Order(StringComparer.Ordinal)
                : [path];
            foreach (string file in files)
            {
                inputs++;
                try
                {
                    if (!FuzzTargets.Execute(target, File.ReadAllBytes(file)))
                    {
                        rejected++;
                    }
                }
#pragma warning disable CA1031 // every escaping exception is a finding to report
                catch (Exception e)
#pragma warning restore CA1031
                {
                    findings++;
                    Console.WriteLine($"FINDING {file}: {e}");
                }
            }
        }
        Console.WriteLine($"{target}: {inputs} inputs ({rejected} rejected with a typed exception), {findings} findings");
        return findings == 0 ? 0 : 1;
    }
}
