using KvEngine.Fuzz.Targets;

namespace KvEngine.Tests.Fuzz;

/// <summary>
/// The fuzz targets of tests/KvEngine.Fuzz (docs/fuzzing.md) in CI, without a fuzzer: every
/// committed seed and every committed crash input (regressions/, one per fixed finding) goes through
/// the same target code the fuzzer runs, then a fixed-seed mutation run explores around the seeds.
/// A finding is any exception other than the engine's typed ones, or an absurd allocation.
/// </summary>
public sealed class FuzzCorpusTests
{
    private static readonly string s_root = Path.Combine(AppContext.BaseDirectory, "Fuzz");

    public static TheoryData<string, string> CommittedInputs()
    {
        var data = new TheoryData<string, string>();
        foreach (string kind in new[] { "corpus", "regressions" })
        {
            foreach (string target in FuzzTargets.Names)
            {
                string dir = Path.Combine(s_root, kind, target);
                if (!Directory.Exists(dir))
                {
                    continue;
                }
                foreach (string file in Directory.EnumerateFiles(dir).Order(StringComparer.Ordinal))
                {
                    data.Add(target, Path.Combine(kind, target, Path.GetFileName(file)));
                }
            }
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(CommittedInputs))]
    public void Committed_input_raises_no_untyped_exception(string target, string file)
    {
        byte[] input = File.ReadAllBytes(Path.Combine(s_root, file));
        bool accepted = FuzzTargets.Execute(target, input);
        if (file.StartsWith("corpus", StringComparison.Ordinal) && !file.Contains("-unsupported", StringComparison.Ordinal))
        {
            // Seeds are intact files from KvEngine's or RocksDB's writers: read in full, no complaint.
            // "-unsupported" seeds are well-formed but refused with KvException (a merge without a
            // merge operator, a compressed WAL).
            Assert.True(accepted, $"seed {file} was rejected by target '{target}'");
        }
    }

    [Fact]
    public void Every_target_has_seeds_from_both_writers()
    {
        foreach (string target in FuzzTargets.Names)
        {
            string[] files = Directory.GetFiles(Path.Combine(s_root, "corpus", target)).Select(Path.GetFileName).ToArray()!;
            Assert.Contains(files, f => f.StartsWith("kv-", StringComparison.Ordinal));
            Assert.Contains(files, f => f.StartsWith("rocksdb-", StringComparison.Ordinal));
        }
    }

    /// <summary>
    /// Mutations of the seeds (fixed seed, fixed count, so the same inputs every run). The count per
    /// target keeps the four runs near 30 s together on a heavily loaded 2-core machine (load average 40).
    /// </summary>
    [Theory]
    [InlineData("table", 25_000)]
    [InlineData("wal", 25_000)]
    [InlineData("manifest", 40_000)]
    [InlineData("writebatch", 100_000)]
    public void Mutated_seeds_raise_no_untyped_exception(string target, int iterations)
    {
        byte[][] seeds = Directory.GetFiles(Path.Combine(s_root, "corpus", target)).Order(StringComparer.Ordinal).Select(File.ReadAllBytes).ToArray();
        var mutator = new InputMutator(seed: 20261124);
        for (int i = 0; i < iterations; i++)
        {
            byte[] input = mutator.Mutate(seeds[i % seeds.Length], seeds);
            try
            {
                FuzzTargets.Execute(target, input);
            }
            catch (Exception e)
            {
                string saved = Path.Combine(Path.GetTempPath(), $"kvengine-fuzz-{target}-{i}.bin");
                File.WriteAllBytes(saved, input);
                Assert.Fail($"Mutation {i} of target '{target}' raised {e.GetType().Name} (input saved to {saved}; replay with KvEngine.Fuzz replay {target} {saved}):\n{e}");
            }
        }
    }
}
