using System.Globalization;
using System.Text;

namespace KvEngine.Tests.Metamorphic;

/// <summary>
/// Runs one op log under the model and under every configuration and compares the results
/// operation by operation. The first operation where any configuration differs from another or
/// from the model (or throws) is reported with the log's comment, the operation's index and text,
/// which configurations read what, and where the op log was written. Stateless.
/// </summary>
internal static class MetaCheck
{
    /// <summary>Where failing op logs go: KVENGINE_METAMORPHIC_OUT, else a folder under the temporary directory.</summary>
    public static string OutputDirectory =>
        Environment.GetEnvironmentVariable("KVENGINE_METAMORPHIC_OUT") is { Length: > 0 } dir ? dir : Path.Combine(Path.GetTempPath(), "kvengine-metamorphic");

    /// <summary>The configurations named in KVENGINE_METAMORPHIC_CONFIGS (comma-separated), else all.</summary>
    public static IReadOnlyList<MetaConfig> SelectedConfigs()
    {
        string? names = Environment.GetEnvironmentVariable("KVENGINE_METAMORPHIC_CONFIGS");
        if (string.IsNullOrWhiteSpace(names))
        {
            return MetaConfigs.All;
        }
        var selected = new List<MetaConfig>();
        foreach (string name in names.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            selected.Add(MetaConfigs.All.FirstOrDefault(c => c.Name == name) ?? throw new ArgumentException($"no configuration '{name}'"));
        }
        return selected;
    }

    /// <summary>Null when every configuration and the model agree on every result; else the failure's description (the op log is then written out).</summary>
    /// <param name="logName">The file name the op log is written under on failure; null writes nothing.</param>
    public static string? Run(MetaLog log, IReadOnlyList<MetaConfig> configs, string? logName)
    {
        string[] model;
        using (var m = new MetaModel(log))
        {
            model = MetaExecutor.Run(log, m);
        }
        var results = new List<string[]>(configs.Count);
        foreach (MetaConfig config in configs)
        {
            int at = -1;
            try
            {
                using var target = new DbTarget(log, config);
                results.Add(MetaExecutor.Run(log, target, i => at = i));
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                string where = at < 0 ? "at open" : $"at op {at.ToString(CultureInfo.InvariantCulture)} `{log.Ops[at]}`";
                return Report(log, logName, $"configuration {config.Name} threw {where}: {e}");
            }
        }
        for (int i = 0; i < log.Ops.Count; i++)
        {
            bool same = true;
            foreach (string[] r in results)
            {
                same &= r[i] == model[i];
            }
            if (!same)
            {
                return Report(log, logName, Describe(log, i, model[i], configs, results));
            }
        }
        return null;
    }

    private static string Describe(MetaLog log, int i, string model, IReadOnlyList<MetaConfig> configs, List<string[]> results)
    {
        // Configurations grouped by what they read, the model's group first.
        var groups = new List<(string Result, List<string> Names)> { (model, ["model"]) };
        for (int c = 0; c < configs.Count; c++)
        {
            int g = groups.FindIndex(x => x.Result == results[c][i]);
            if (g < 0)
            {
                groups.Add((results[c][i], [configs[c].Name]));
            }
            else
            {
                groups[g].Names.Add(configs[c].Name);
            }
        }
        var sb = new StringBuilder();
        sb.Append("op ").Append(i.ToString(CultureInfo.InvariantCulture)).Append(" `").Append(log.Ops[i]).Append("`: results differ");
        if (groups[0].Names.Count == 1)
        {
            sb.Append(" (every configuration disagrees with the model: a bug common to all of them, or in the model)");
        }
        foreach ((string result, List<string> names) in groups)
        {
            sb.Append("\n  [").Append(string.Join(", ", names)).Append("] read: ").Append(MetaValues.Abbreviate(result));
        }
        return sb.ToString();
    }

    private static string Report(MetaLog log, string? logName, string failure)
    {
        if (logName == null)
        {
            return $"{log.Comment}: {failure}";
        }
        Directory.CreateDirectory(OutputDirectory);
        string file = Path.Combine(OutputDirectory, logName + ".log");
        File.WriteAllText(file, log.ToText());
        return $"{log.Comment}: {failure}\nOp log: {file} (replay: KVENGINE_METAMORPHIC_REPLAY={file}, restrict with KVENGINE_METAMORPHIC_CONFIGS=a,b)";
    }
}
