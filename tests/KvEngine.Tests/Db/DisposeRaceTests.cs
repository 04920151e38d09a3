using System.Buffers;
using System.Globalization;
using KvEngine.Db;
using KvEngine.Db.State;
using Xunit.Abstractions;
using ValueType = KvEngine.Format.ValueType;

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

    /// <summary>
    /// The two halves of the read path's rule, deterministically: a read state pinned before the
    /// close keeps its table readers open and readable until released (the last release closes
    /// them), and a read that comes after the close throws instead of retrying forever on the
    /// unpinnable state (it spun at 276e443: the wait below then fails).
    /// </summary>
    [Fact]
    public void AStatePinnedAcrossCloseKeepsItsTablesAndALaterReadThrows()
    {
        string path = Path.Combine(_dir.FullName, "pinned");
        KvDb db = KvDb.Open(path, new KvOptions { FileSystem = NoSyncFileSystem.Instance });
        db.Put("k"u8, "v"u8);
        db.Flush();
        Assert.Equal("v"u8.ToArray(), db.Get("k"u8)); // opens the table reader
        ColumnFamilyData cfd = db.Impl.DefaultFamily;
        ulong sequence = db.LatestSequenceNumber;
        ReadState pinned = cfd.AcquireReadState();

        db.Dispose();

        Task<ReadState> late = Task.Run(cfd.AcquireReadState);
        Assert.True(((IAsyncResult)late).AsyncWaitHandle.WaitOne(TimeSpan.FromMinutes(1)), "AcquireReadState still retries on a closed family");
        Assert.IsType<ObjectDisposedException>(late.Exception!.InnerException);
        Assert.Equal(1, cfd.Tables.Count);
        var sink = new ArrayBufferWriter<byte>();
        Assert.True(KvEngine.Db.Read.PointReader.TryGetFromTables(pinned.Version, cfd.Tables, "k"u8, sequence, sink, verifyChecksums: true, fillCache: true,
            covering: 0, out ValueType type, out _, out _));
        Assert.Equal(ValueType.Value, type);
        Assert.Equal("v"u8.ToArray(), sink.WrittenSpan.ToArray());
        pinned.Unref();
        Assert.Equal(0, cfd.Tables.Count); // the last pinned state's release closed the readers
    }

    private static int? EnvInt(string name) =>
        int.TryParse(Environment.GetEnvironmentVariable(name), NumberStyles.Integer, CultureInfo.InvariantCulture, out int v) ? v : null;
}
