using System.Diagnostics;
using KvEngine.Stress;

using KvEngine.Tests.Db;

namespace KvEngine.Tests.Stress;

/// <summary>
/// Short forms of the reliability tools (issue 14): kvstress on disk with reopens (and a tampered
/// database caught by -verify_only), kvstress's in-process power-loss and I/O-fault cycles, and
/// kvcrashtest's SIGKILL cycles. Seeded; every kill point and power-cut point must verify, so the
/// verdict does not depend on timing.
/// </summary>
public sealed class KvStressTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-kvstress-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Fact]
    public void OnDiskRunWithReopensPassesAndVerifyOnlyCatchesADeletedKey()
    {
        string db = Path.Combine(_dir.FullName, "db"), expected = Path.Combine(_dir.FullName, "expected");
        string[] common = [$"-db={db}", $"-expected_values_dir={expected}", "-max_key=2000", "-threads=2", "-seed=5"];
        (int code, string output) = Run(KvStress(), [.. common, "-destroy_db_initially=1", "-ops_per_thread=3000", "-reopen=2", "-write_buffer_size=32768"]);
        Assert.True(code == 0, output);
        Assert.Contains("kvstress: verified 2000 keys after reopen 2", output, StringComparison.Ordinal);
        Assert.Contains("kvstress: PASSED", output, StringComparison.Ordinal);

        long victim;
        using (KvDb kv = KvDb.Open(db))
        {
            using (KvIterator it = kv.NewIterator())
            {
                it.SeekToFirst();
                Assert.True(it.Valid);
                victim = StressKeys.Index(it.Key);
            }
            kv.Delete(StressKeys.Key(victim));
        }
        (code, output) = Run(KvStress(), [.. common, "-verify_only=1"]);
        Assert.Equal(1, code);
        Assert.Contains($"VERIFICATION FAILURE: after open: key {victim} is absent, expected value(base", output, StringComparison.Ordinal);
    }

    [Fact]
    public void PowerLossCyclesVerify()
    {
        StressFlags flags = StressFlags.Parse(["-power_loss_cycles=30", "-reopen=5", "-max_key=1000", "-ops_per_thread=800", "-threads=2", "-sync_one_in=10",
            "-write_buffer_size=32768", "-flush_one_in=300", "-compact_range_one_in=1500", "-seed=11"]);
        var output = new StringWriter();
        var runner = new StressRunner(flags, output);
        Assert.True(runner.Run() == 0, output.ToString());
        Assert.Equal(30, runner.Stats[StressCounter.PowerLoss]);
        Assert.InRange(runner.Stats[StressCounter.Reopen], 1, 30); // the cycle draws are seeded: some cycles reopen cleanly mid-way
        Assert.Equal((30 + runner.Stats[StressCounter.Reopen]) * 1000, runner.Stats[StressCounter.KeysVerified]);
        Assert.True(runner.Stats[StressCounter.UnsyncedWritesLost] + runner.Stats[StressCounter.UnsyncedWritesSurvived] > 0, "no power cut fell after an unsynced write");
    }

    [Fact]
    public void FaultInjectionCyclesRecoverAndVerify()
    {
        StressFlags flags = StressFlags.Parse(["-fault_injection=1", "-power_loss_cycles=8", "-max_key=1000", "-ops_per_thread=800", "-threads=2",
            "-sync_one_in=10", "-write_buffer_size=32768", "-write_fault_one_in=150", "-read_fault_one_in=1000", "-seed=12"]);
        var output = new StringWriter();
        var runner = new StressRunner(flags, output);
        Assert.True(runner.Run() == 0, output.ToString());
        Assert.True(runner.Stats[StressCounter.WriteFailures] + runner.Stats[StressCounter.InjectedErrorsSeen] > 0, output.ToString());
        Assert.Contains("after Resume", output.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public void KvCrashTestKillCyclesFindNoLoss()
    {
        (int code, string output) = Run(KvCrashTest(), ["--cycles", "4", "--threads", "2", "--max-key", "2000", "--min-kill-ms", "50", "--max-kill-ms", "500",
            "--seed", "3", "--db", Path.Combine(_dir.FullName, "crash")]);
        Assert.True(code == 0, output);
        Assert.Contains("mode Kill, column families 1, cycles 4,", output, StringComparison.Ordinal);
        Assert.Contains("losses found 0", output, StringComparison.Ordinal);
    }

    [Fact]
    public void UniversalCompactionSurvivesPowerLossAndKills()
    {
        StressFlags flags = StressFlags.Parse(["-power_loss_cycles=20", "-compaction_style=1", "-max_key=1000", "-ops_per_thread=1500", "-threads=2",
            "-sync_one_in=10", "-write_buffer_size=16384", "-flush_one_in=200", "-compact_range_one_in=1500", "-use_merge=1", "-seed=21"]);
        Assert.Equal(CompactionStyle.Universal, flags.CompactionStyle);
        var output = new StringWriter();
        var runner = new StressRunner(flags, output);
        Assert.True(runner.Run() == 0, output.ToString());
        Assert.Equal(20, runner.Stats[StressCounter.PowerLoss]);

        (int code, string text) = Run(KvCrashTest(), ["--cycles", "4", "--threads", "2", "--max-key", "2000", "--min-kill-ms", "50", "--max-kill-ms", "500",
            "--seed", "7", "--db", Path.Combine(_dir.FullName, "universal-crash"), "--", "-compaction_style=1", "-write_buffer_size=32768"]);
        Assert.True(code == 0, text);
        Assert.Contains("losses found 0", text, StringComparison.Ordinal);
    }

    [Fact]
    public void KvCrashTestPowerLossAndFaultModesFindNoLoss()
    {
        (int code, string output) = Run(KvCrashTest(), ["--power-loss", "--cycles", "10", "--threads", "2", "--max-key", "1000", "--ops", "500", "--seed", "4"]);
        Assert.True(code == 0, output);
        Assert.Contains("mode PowerLoss, column families 1, cycles 10,", output, StringComparison.Ordinal);
        (code, output) = Run(KvCrashTest(), ["--faults", "--cycles", "4", "--threads", "2", "--max-key", "1000", "--ops", "500", "--seed", "4"]);
        Assert.True(code == 0, output);
        Assert.Contains("mode Faults, column families 1, cycles 4,", output, StringComparison.Ordinal);
    }

    [Fact]
    public void ColumnFamiliesOnDiskRunPassesAndVerifyOnlyCatchesAKeyInTheWrongFamily()
    {
        string db = Path.Combine(_dir.FullName, "cfdb"), expected = Path.Combine(_dir.FullName, "cfexpected");
        string[] common = [$"-db={db}", $"-expected_values_dir={expected}", "-max_key=1500", "-threads=2", "-seed=6", "-column_families=3"];
        (int code, string output) = Run(KvStress(), [.. common, "-destroy_db_initially=1", "-ops_per_thread=3000", "-reopen=2", "-write_buffer_size=16384",
            "-flush_one_in=400"]);
        Assert.True(code == 0, output);
        Assert.Contains("kvstress: PASSED", output, StringComparison.Ordinal);
        Assert.Equal(["default", "1", "2"], KvDb.ListColumnFamilies(db));

        // A key moved from its family (i % 3) into the next one is found by the verifier.
        long victim;
        string[] names = ["default", "1", "2"];
        using (KvDb kv = KvDb.Open(db, new KvOptions(), DbTestUtil.WithDefault(new KvOptions(), names.Select(n => new ColumnFamilyDescriptor(n)))))
        {
            ColumnFamilyHandle first = kv.GetColumnFamily("1")!;
            byte[] value;
            using (KvIterator it = kv.NewIterator(first))
            {
                it.SeekToFirst();
                Assert.True(it.Valid);
                victim = StressKeys.Index(it.Key);
                value = it.Value.ToArray();
            }
            Assert.Equal(1, victim % 3);
            using var batch = new WriteBatch();
            batch.Delete(first, StressKeys.Key(victim));
            batch.Put(kv.GetColumnFamily("2")!, StressKeys.Key(victim), value);
            kv.Write(batch);
        }
        (code, output) = Run(KvStress(), [.. common, "-verify_only=1"]);
        Assert.Equal(1, code);
        Assert.Contains($"VERIFICATION FAILURE: after open (family 1): key {victim} is absent", output, StringComparison.Ordinal);
    }

    [Fact]
    public void KvCrashTestWithColumnFamiliesFindsNoLoss()
    {
        (int code, string output) = Run(KvCrashTest(), ["--cycles", "4", "--threads", "2", "--max-key", "1500", "--min-kill-ms", "50", "--max-kill-ms", "500",
            "--column-families", "3", "--seed", "8", "--db", Path.Combine(_dir.FullName, "cfcrash"), "--", "-write_buffer_size=16384", "-flush_one_in=400"]);
        Assert.True(code == 0, output);
        Assert.Contains("mode Kill, column families 3, cycles 4,", output, StringComparison.Ordinal);
        Assert.Contains("losses found 0", output, StringComparison.Ordinal);
        (code, output) = Run(KvCrashTest(), ["--power-loss", "--cycles", "10", "--threads", "2", "--max-key", "1000", "--ops", "500",
            "--column-families", "3", "--seed", "9"]);
        Assert.True(code == 0, output);
        Assert.Contains("mode PowerLoss, column families 3, cycles 10,", output, StringComparison.Ordinal);
        Assert.Contains("losses found 0", output, StringComparison.Ordinal);
    }

    /// <summary>
    /// Checkpoints under load (db_stress's -checkpoint_one_in): each is taken while the other
    /// workers write, opened read-only and checked on the taking worker's stripe; kill cycles leave
    /// half-made ones behind for the next run to clear; power-loss cycles cut the power mid-checkpoint.
    /// </summary>
    [Fact]
    public void KvCrashTestWithCheckpointsUnderLoadFindsNoLoss()
    {
        string db = Path.Combine(_dir.FullName, "ckptcrash");
        (int code, string output) = Run(KvCrashTest(), ["--cycles", "4", "--threads", "2", "--max-key", "1500", "--min-kill-ms", "100", "--max-kill-ms", "600",
            "--column-families", "2", "--seed", "10", "--db", db, "--", "-write_buffer_size=16384", "-checkpoint_one_in=60"]);
        Assert.True(code == 0, output);
        Assert.Contains("losses found 0", output, StringComparison.Ordinal);
        (code, output) = Run(KvStress(), ["-power_loss_cycles=4", "-threads=2", "-max_key=1000", "-ops_per_thread=600", "-column_families=2",
            "-sync_one_in=10", "-checkpoint_one_in=50", "-seed=11"]);
        Assert.True(code == 0, output);
        Assert.Matches(@"Checkpoint\s+[1-9]", output);
    }

    /// <summary>
    /// Merges survive kill -9 and power loss (db_stress's -use_merge): every Put of the run is a
    /// merge operand, written through the WAL, flushed and compacted (partial merges), and each
    /// restart's verification reads them through full merges.
    /// </summary>
    [Fact]
    public void KvCrashTestWithMergesFindsNoLoss()
    {
        string db = Path.Combine(_dir.FullName, "mergecrash");
        (int code, string output) = Run(KvCrashTest(), ["--cycles", "4", "--threads", "2", "--max-key", "1500", "--min-kill-ms", "100", "--max-kill-ms", "600",
            "--column-families", "2", "--seed", "12", "--db", db, "--", "-write_buffer_size=16384", "-flush_one_in=300", "-compact_range_one_in=600", "-use_merge=1"]);
        Assert.True(code == 0, output);
        Assert.Contains("losses found 0", output, StringComparison.Ordinal);
        (code, output) = Run(KvStress(), ["-power_loss_cycles=6", "-threads=2", "-max_key=1000", "-ops_per_thread=600", "-column_families=2",
            "-sync_one_in=10", "-write_buffer_size=16384", "-flush_one_in=200", "-compact_range_one_in=500", "-use_merge=1", "-seed=13"]);
        Assert.True(code == 0, output);
        Assert.Matches(@"Merge\s+[1-9]", output); // the writes went through Merge, alone and in batches
    }

    internal static (int Code, string Output) Run(string dll, string[] args)
    {
        var psi = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        psi.ArgumentList.Add(dll);
        foreach (string a in args)
        {
            psi.ArgumentList.Add(a);
        }
        using Process p = Process.Start(psi)!;
        Task<string> stderr = p.StandardError.ReadToEndAsync();
        string stdout = p.StandardOutput.ReadToEnd();
        Assert.True(p.WaitForExit(TimeSpan.FromSeconds(180)), $"{Path.GetFileName(dll)} did not finish in 180 s");
        return (p.ExitCode, stdout + stderr.Result);
    }

    private static string KvStress() => Tool("KvEngine.Stress", "kvstress.dll");

    internal static string KvCrashTest() => Tool("KvEngine.CrashTest", "kvcrashtest.dll");

    private static string Tool(string project, string dll)
    {
        var dir = new DirectoryInfo(AppContext.BaseDirectory); // tests/KvEngine.Tests/bin/<cfg>/net10.0/
        string config = dir.Parent!.Name;
        string tests = dir.Parent!.Parent!.Parent!.Parent!.FullName;
        string path = Path.Combine(tests, project, "bin", config, "net10.0", dll);
        Assert.True(File.Exists(path), $"{dll} not built at {path}");
        return path;
    }
}
