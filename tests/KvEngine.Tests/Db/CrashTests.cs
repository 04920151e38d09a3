using System.Diagnostics;
using System.Globalization;
using KvEngine.Storage;

namespace KvEngine.Tests.Db;

/// <summary>
/// Kills a writing child process with SIGKILL at random moments, at least 20 times, and checks
/// after each reopen that every acknowledged write is there and nothing unwritten is. The child's
/// batches include Deletes and DeleteRanges, so range tombstones are in the WAL, in flushed and in
/// compacted tables when it dies.
/// </summary>
public sealed class CrashTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-crash-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Fact]
    public void AcknowledgedSyncWritesSurviveSigkill()
    {
        string dbPath = Path.Combine(_dir.FullName, "db");
        string child = ChildPath();
        var rng = new Random(20261121);
        var acked = new SortedSet<long>();
        var inFlight = new HashSet<long>(); // writes killed before their ack: may or may not be there
        long next = 1;
        for (int cycle = 0; cycle < 20; cycle++)
        {
            long lastAcked = RunChildUntilKilled(child, dbPath, next, rng.Next(150, 900), acked);
            Assert.True(lastAcked >= next, $"cycle {cycle}: the child acknowledged nothing");
            inFlight.Add(lastAcked + 1);
            Verify(dbPath, acked, inFlight, cycle);
            next = lastAcked + 10; // past the in-flight index, whatever happened to it
        }
    }

    private static long RunChildUntilKilled(string child, string dbPath, long first, int killAfterMs, SortedSet<long> acked)
    {
        var psi = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        psi.ArgumentList.Add(child);
        psi.ArgumentList.Add(dbPath);
        psi.ArgumentList.Add(first.ToString(CultureInfo.InvariantCulture));
        using Process p = Process.Start(psi)!;
        long last = first - 1;
        var sw = Stopwatch.StartNew();
        bool ready = false;
        Stopwatch? sinceReady = null;
        while (true)
        {
            string? line = p.StandardOutput.ReadLine();
            if (line == null)
            {
                string err = p.StandardError.ReadToEnd();
                throw new InvalidOperationException($"Child exited early (code {p.ExitCode}): {err}");
            }
            if (line == "ready")
            {
                ready = true;
                sinceReady = Stopwatch.StartNew();
                continue;
            }
            if (line.StartsWith("ack ", StringComparison.Ordinal))
            {
                last = long.Parse(line.AsSpan(4), CultureInfo.InvariantCulture);
                acked.Add(last);
            }
            if (ready && sinceReady!.ElapsedMilliseconds >= killAfterMs)
            {
                p.Kill(); // SIGKILL on Unix
                break;
            }
            Assert.True(sw.Elapsed < TimeSpan.FromSeconds(60), "child made no progress");
        }
        p.WaitForExit();
        // Acks printed before the kill that we had not read yet are acknowledged writes too.
        string? rest;
        while ((rest = p.StandardOutput.ReadLine()) != null)
        {
            if (rest.StartsWith("ack ", StringComparison.Ordinal))
            {
                last = long.Parse(rest.AsSpan(4), CultureInfo.InvariantCulture);
                acked.Add(last);
            }
        }
        return last;
    }

    private static void Verify(string dbPath, SortedSet<long> acked, HashSet<long> inFlight, int cycle)
    {
        var options = new KvOptions { CreateIfMissing = false };
        // A kill during a flush or compaction leaves a half-written table; open must remove it.
        Compaction.CompactionModelTests.CheckNoLeakedTables(LocalFileSystem.Instance, dbPath, options);
        using KvDb db = KvDb.Open(dbPath, options);
        foreach (long i in acked)
        {
            bool deleted = ((i + 5) % 10 == 0 && acked.Contains(i + 5)) || RangeDeletedBy(i, acked);
            byte[]? v = db.Get(CrashKeys.Key(i));
            if (deleted)
            {
                Assert.True(v == null, $"cycle {cycle}: key {i} was deleted by an acknowledged write (Delete or DeleteRange) but is present");
            }
            else if (!(inFlight.Contains(i + 5) && (i + 5) % 10 == 0) && !RangeDeletedBy(i, inFlight))
            {
                Assert.True(v != null, $"cycle {cycle}: acknowledged key {i} is missing");
                Assert.Equal(CrashKeys.Value(i), v);
            }
        }
        // Nothing beyond the writes that may have been in flight at a kill.
        using KvIterator it = db.NewIterator();
        for (it.SeekToFirst(); it.Valid; it.Next())
        {
            string k = System.Text.Encoding.ASCII.GetString(it.Key);
            long i = long.Parse(k.AsSpan(3), CultureInfo.InvariantCulture);
            Assert.True(acked.Contains(i) || inFlight.Contains(i), $"cycle {cycle}: key {i} was never acknowledged");
            Assert.False(RangeDeletedBy(i, acked), $"cycle {cycle}: iterator shows key {i}, deleted by an acknowledged DeleteRange");
            if (inFlight.Contains(i))
            {
                Assert.Equal(CrashKeys.Value(i), it.Value.ToArray());
            }
        }
    }

    // Write i with i % 50 == 25 deletes keys i-20 .. i-16 with DeleteRange.
    private static bool RangeDeletedBy(long key, IReadOnlySet<long> writes)
    {
        for (long i = key + 16; i <= key + 20; i++)
        {
            if (i % 50 == 25 && writes.Contains(i))
            {
                return true;
            }
        }
        return false;
    }

    private static string ChildPath()
    {
        string here = AppContext.BaseDirectory; // tests/KvEngine.Tests/bin/<cfg>/net10.0/
        var dir = new DirectoryInfo(here);
        string config = dir.Parent!.Name;
        string tests = dir.Parent!.Parent!.Parent!.Parent!.FullName;
        string path = Path.Combine(tests, "KvEngine.CrashChild", "bin", config, "net10.0", "KvEngine.CrashChild.dll");
        Assert.True(File.Exists(path), $"crash child not built at {path}");
        return path;
    }
}
