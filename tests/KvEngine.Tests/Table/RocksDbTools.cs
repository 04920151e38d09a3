using System.ComponentModel;
using System.Diagnostics;
using System.Globalization;
using System.Text.RegularExpressions;
using KvEngine.Format;

namespace KvEngine.Tests.Table;

/// <summary>
/// Runs RocksDB 7.8's command-line tools (Debian's rocksdb-tools) as a test oracle. A missing tool
/// fails the test with the install command; it never skips.
/// </summary>
internal static partial class RocksDbTools
{
    public const string InstallHint = "apt-get install -y rocksdb-tools";

    public static (int ExitCode, string Stdout, string Stderr) Run(string tool, IEnumerable<string> args, int timeoutMs = 60_000)
    {
        var psi = new ProcessStartInfo(tool)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string a in args)
        {
            psi.ArgumentList.Add(a);
        }
        Process process;
        try
        {
            process = Process.Start(psi) ?? throw new InvalidOperationException($"{tool} did not start");
        }
        catch (Win32Exception e)
        {
            Assert.Fail($"RocksDB tool '{tool}' is not installed ({e.Message}); install it with `{InstallHint}`.");
            throw;
        }
        using (process)
        {
            Task<string> stdout = process.StandardOutput.ReadToEndAsync();
            Task<string> stderr = process.StandardError.ReadToEndAsync();
            if (!process.WaitForExit(timeoutMs))
            {
                process.Kill(entireProcessTree: true);
                Assert.Fail($"{tool} timed out after {timeoutMs} ms");
            }
            process.WaitForExit();
            return (process.ExitCode, stdout.Result, stderr.Result);
        }
    }

    /// <summary>sst_dump --command=check --verify_checksum; fails on any reported problem (the tool exits 0 regardless).</summary>
    public static void AssertSstDumpCheckPasses(string file)
    {
        (int rc, string stdout, string stderr) = Run("sst_dump", [$"--file={file}", "--command=check", "--verify_checksum"]);
        string all = stdout + stderr;
        Assert.True(rc == 0, $"sst_dump exit {rc}: {all}");
        Assert.DoesNotContain("Corruption", all, StringComparison.Ordinal);
        Assert.DoesNotContain("error", all, StringComparison.OrdinalIgnoreCase);
        Assert.DoesNotContain("Not implemented", all, StringComparison.Ordinal);
        Assert.Contains("Sst file format: block-based", all, StringComparison.Ordinal);
    }

    /// <summary>Entries printed by sst_dump --command=scan --output_hex, as (user key hex, seq, type, value hex).</summary>
    public static List<(string Key, ulong Seq, int Type, string Value)> Scan(string file)
    {
        (int rc, string stdout, string stderr) = Run("sst_dump", [$"--file={file}", "--command=scan", "--output_hex"]);
        Assert.True(rc == 0, $"sst_dump exit {rc}: {stderr}");
        Assert.DoesNotContain("Corruption", stdout + stderr, StringComparison.Ordinal);
        var list = new List<(string, ulong, int, string)>();
        foreach (string line in stdout.Split('\n'))
        {
            Match m = ScanLine().Match(line);
            if (m.Success)
            {
                list.Add((m.Groups[1].Value, ulong.Parse(m.Groups[2].Value, CultureInfo.InvariantCulture),
                    int.Parse(m.Groups[3].Value, CultureInfo.InvariantCulture), m.Groups[4].Value));
            }
        }
        return list;
    }

    public static string Properties(string file)
    {
        (int rc, string stdout, string stderr) = Run("sst_dump", [$"--file={file}", "--show_properties", "--command=none"]);
        Assert.True(rc == 0, $"sst_dump exit {rc}: {stderr}");
        Assert.DoesNotContain("Corruption", stdout + stderr, StringComparison.Ordinal);
        return stdout;
    }

    [GeneratedRegex(@"^'([0-9A-F]*)' seq:(\d+), type:(\d+) => ([0-9A-F]*)\s*$")]
    private static partial Regex ScanLine();

    /// <summary><c>sst_dump --command=scan</c> of <paramref name="path"/> lists exactly <paramref name="entries"/>, in order.</summary>
    public static void AssertScanMatches(string path, IReadOnlyList<Entry> entries)
    {
        var scanned = Scan(path);
        Assert.Equal(entries.Count, scanned.Count);
        for (int i = 0; i < entries.Count; i++)
        {
            Entry e = entries[i];
            Assert.Equal(Convert.ToHexString(InternalKeys.UserKey(e.Key)), scanned[i].Key);
            Assert.Equal(InternalKeys.Sequence(e.Key), scanned[i].Seq);
            Assert.Equal((int)InternalKeys.Type(e.Key), scanned[i].Type);
            Assert.Equal(Convert.ToHexString(e.Value), scanned[i].Value);
        }
    }
}
