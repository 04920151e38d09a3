using System.Globalization;
using Xunit.Abstractions;

namespace KvEngine.Tests.Db;

/// <summary>
/// Dispose racing every public operation (<see cref="DisposeRace"/>): each call finishes or throws
/// ObjectDisposedException, no native memory is freed under a caller (a use after free kills the
/// test host), nothing spins or waits forever. The short form runs in CI; the long form is the
/// same test with more trials: <c>KVENGINE_DISPOSE_RACE_TRIALS=5000 dotnet test --filter DisposeRaceTests</c>
/// (<c>KVENGINE_DISPOSE_RACE_SEED</c> replays a run).
/// </summary>
public sealed class DisposeRaceTests : IDisposable
{
    private const int CiTrials = 120;

    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-dispose-race-");
    private readonly ITestOutputHelper _output;

    public DisposeRaceTests(ITestOutputHelper output)
    {
        _output = output;
    }

    public void Dispose() => _dir.Delete(recursive: true);

    [Fact]
    public void EveryOperationFinishesOrThrowsObjectDisposedWhenDisposeRacesIt()
    {
        int trials = EnvInt("KVENGINE_DISPOSE_RACE_TRIALS") ?? CiTrials;
        int seed = EnvInt("KVENGINE_DISPOSE_RACE_SEED") ?? Environment.TickCount;
        long succeeded = 0;
        long refused = 0;
        var started = DateTime.UtcNow;
        for (int trial = 0; trial < trials; trial++)
        {
            string path = Path.Combine(_dir.FullName, trial.ToString(CultureInfo.InvariantCulture));
            var race = new DisposeRace(path, seed + trial);
            race.Run();
            Assert.True(race.Failures.Count == 0,
                $"trial {trial} (KVENGINE_DISPOSE_RACE_SEED={seed}, trial seed {seed + trial}):{Environment.NewLine}{string.Join(Environment.NewLine, race.Failures)}");
            succeeded += race.Succeeded;
            refused += race.Refused;
            Directory.Delete(path, recursive: true);
        }
        _output.WriteLine(
            $"{trials} trials, seed {seed}: {succeeded} operations succeeded, {refused} refused (ObjectDisposedException/KvException), {(DateTime.UtcNow - started).TotalSeconds:F1} s");
        Assert.True(refused > 0, "no operation ever met a disposed database: the race was not exercised");
    }

    private static int? EnvInt(string name) =>
        int.TryParse(Environment.GetEnvironmentVariable(name), NumberStyles.Integer, CultureInfo.InvariantCulture, out int v) ? v : null;
}
