using System.Text;
using KvEngine.Storage;

namespace KvEngine.Tests.Compaction;

/// <summary>
/// Power loss at assorted file-system operations while flushes and compactions run: every
/// acknowledged (synced) write survives, nothing unwritten appears, and after reopen the directory
/// holds exactly the live tables.
/// </summary>
public sealed class CompactionDurabilityTests
{
    [Fact]
    public void PowerLossDuringCompactionsLosesNothingAndLeaksNothing()
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/p");
        KvOptions options = CompactionTestUtil.Tiny(fs);
        var rng = new Random(4242);
        var model = new Dictionary<int, string?>();
        int next = 0;
        int crashesDuringCompaction = 0;
        for (int cycle = 0; cycle < 12; cycle++)
        {
            // Even cycles crash at a random file-system operation; odd ones at a random operation of
            // a running compaction (writing outputs, syncing, logging its edit, deleting inputs).
            bool duringCompaction = cycle % 2 == 1;
            int crashAt = duringCompaction ? rng.Next(1, 80) : rng.Next(2000, 12000);
            int ops = 0;
            bool crashed = false;
            bool inCompaction = false;
            KvDb db = KvDb.Open("/p/db", options);
            fs.ShouldFail = (op, path) =>
            {
                if (crashed)
                {
                    return true; // the crashed process does nothing more
                }
                bool compacting = Thread.CurrentThread.Name?.StartsWith("KvEngine background", StringComparison.Ordinal) == true &&
                    Environment.StackTrace.Contains(nameof(KvEngine.Db.Background.CompactionRunner) + ".Run", StringComparison.Ordinal);
                if ((duringCompaction && !compacting) || ++ops < crashAt)
                {
                    return false;
                }
                crashed = true;
                inCompaction = compacting;
                fs.SimulatePowerLoss();
                return true;
            };
            (int Key, string? Value)? inFlight = null;
            try
            {
                while (!crashed)
                {
                    int key = rng.Next(400);
                    string? value = rng.Next(8) == 0 ? null : $"v{next++}-{new string('x', rng.Next(20, 120))}";
                    inFlight = (key, value);
                    if (value == null)
                    {
                        db.Delete(Key(key), new WriteOptions { Sync = true });
                    }
                    else
                    {
                        db.Put(Key(key), Encoding.ASCII.GetBytes(value), new WriteOptions { Sync = true });
                    }
                    model[key] = value;
                    inFlight = null;
                }
            }
            catch (KvException)
            {
                // The write that hit the power loss (or the background error it caused).
            }
            catch (IOException)
            {
            }
            try
            {
                db.Dispose();
            }
            catch (KvException)
            {
            }
            fs.ShouldFail = null;
            if (inCompaction)
            {
                crashesDuringCompaction++;
            }

            using (KvDb reopened = KvDb.Open("/p/db", options))
            {
                for (int key = 0; key < 400; key++)
                {
                    byte[]? got = reopened.Get(Key(key));
                    string? gotText = got == null ? null : Encoding.ASCII.GetString(got);
                    model.TryGetValue(key, out string? want);
                    if (inFlight is { } f && f.Key == key && gotText == f.Value)
                    {
                        model[key] = f.Value; // the in-flight write made it: it is the state from now on
                        continue;
                    }
                    Assert.True(want == gotText, $"cycle {cycle} (crash at op {crashAt}): key {key} = {gotText ?? "null"}, acknowledged {want ?? "null"}");
                }
            }
            CompactionModelTests.CheckNoLeakedTables(fs, "/p/db", options);
        }
        Assert.True(crashesDuringCompaction >= 6, $"only {crashesDuringCompaction} crashes hit a running compaction");
    }

    private static byte[] Key(int i) => Encoding.ASCII.GetBytes($"key{i:D4}");
}
