using System.Diagnostics.CodeAnalysis;

namespace KvEngine.DbBench;

/// <summary>
/// What this kvbench binary was built with. Under Native AOT the switch below is a constant the
/// compiler folds (a feature switch, set by the project), so code behind a false switch is not
/// compiled into the binary at all.
/// </summary>
internal static class BenchFeatures
{
    /// <summary>The switch's name, as the project sets it (KvEngine.DbBench.csproj).</summary>
    public const string OtherEnginesSwitch = "KvEngine.DbBench.OtherEngines";

    /// <summary>
    /// Whether the binary carries what is not KvEngine: the ZoneTree engine (<c>-engine=zonetree</c>)
    /// and the replicated cluster of <c>-benchmarks=raftbench</c> (DotNext and KvEngine.Replication).
    /// True unless the switch is set false: the JIT build and an AOT build published with
    /// <c>-p:KvBenchOtherEngines=true</c> have them; the default AOT build, the one that measures
    /// KvEngine's memory against db_bench's, leaves them out (their code and the runtime data the
    /// AOT binary rehydrates for their types were 4.5 MiB of RSS before the engine held anything:
    /// docs/benchmarks.md, "kvbench under Native AOT").
    /// </summary>
    [FeatureSwitchDefinition(OtherEnginesSwitch)]
    public static bool OtherEngines => !AppContext.TryGetSwitch(OtherEnginesSwitch, out bool enabled) || enabled;
}
