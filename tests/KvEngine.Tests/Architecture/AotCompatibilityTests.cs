using System.Reflection;

namespace KvEngine.Tests.Architecture;

/// <summary>
/// The engine stays trim- and Native AOT-compatible: src/Directory.Build.props sets
/// <c>IsAotCompatible</c>, which stamps the assembly so that an application's AOT or trimmed
/// publish trusts it, and turns on the trim, AOT and single-file analyzers (their warnings are
/// errors) where <c>KvEngineAotAnalyzers</c> is true, as on CI. This test fails when the property
/// is dropped, which would also silently switch those analyzers off. The engine's dependencies are
/// checked by an AOT publish of kvbench (<c>benchmarks/scripts/kvbench_aot_check.sh</c>,
/// docs/benchmarks.md "kvbench under Native AOT"), too slow for every test run.
/// </summary>
public sealed class AotCompatibilityTests
{
    [Fact]
    public void EngineAssemblyIsMarkedTrimmableAndAotCompatible()
    {
        Assembly engine = typeof(KvDb).Assembly;
        var metadata = engine.GetCustomAttributes<AssemblyMetadataAttribute>().ToDictionary(a => a.Key, a => a.Value, StringComparer.Ordinal);
        Assert.True(metadata.TryGetValue("IsAotCompatible", out string? aot) && aot == "True", "src/Directory.Build.props must set IsAotCompatible");
        Assert.True(metadata.TryGetValue("IsTrimmable", out string? trimmable) && trimmable == "True", "src/Directory.Build.props must set IsAotCompatible (it implies IsTrimmable)");
    }
}
