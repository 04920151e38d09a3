using System.Diagnostics;

namespace KvEngine.Tool.Tests;

/// <summary>
/// Runs RocksDB 7.8's ldb, sst_dump and db_bench (the oracle kvtool's output is compared with).
/// A missing tool fails the test with the command that installs it. Commands that open a database
/// run on a copy (<see cref="Copy"/>): RocksDB replays the WAL and writes a new MANIFEST.
/// </summary>
internal static class RocksDbTools
{
    public static ToolResult Run(string tool, params string[] args)
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
            process = Process.Start(psi)!;
        }
        catch (System.ComponentModel.Win32Exception e)
        {
            Assert.Fail($"{tool} is not installed ({e.Message}); install RocksDB 7.8's tools: apt-get install rocksdb-tools");
            throw;
        }
        using (process)
        {
            using var stdout = new MemoryStream();
            Task copy = process.StandardOutput.BaseStream.CopyToAsync(stdout);
            Task<string> stderr = process.StandardError.ReadToEndAsync();
            Assert.True(process.WaitForExit(300_000), $"{tool} timed out");
            process.WaitForExit();
            copy.Wait();
            return new ToolResult(process.ExitCode, stdout.ToArray(), stderr.Result);
        }
    }

    public static ToolResult RunOk(string tool, params string[] args)
    {
        ToolResult result = Run(tool, args);
        Assert.True(result.ExitCode == 0, $"{tool} {string.Join(' ', args)} exited {result.ExitCode}: {result.Error}");
        return result;
    }

    /// <summary>Copies the files of <paramref name="db"/> (a flat directory) but LOCK to a new sibling directory.</summary>
    public static string Copy(string db, string suffix)
    {
        string copy = db + "-" + suffix + "-" + Guid.NewGuid().ToString("N")[..8];
        Directory.CreateDirectory(copy);
        foreach (string file in Directory.GetFiles(db))
        {
            if (Path.GetFileName(file) != "LOCK")
            {
                File.Copy(file, Path.Combine(copy, Path.GetFileName(file)));
            }
        }
        return copy;
    }
}
