using System.ComponentModel;
using System.Diagnostics;

namespace KvEngine.Tests.Wal;

/// <summary>
/// Runs RocksDB 7.8's command-line tools (ldb, db_bench) for the interop tests. A missing tool
/// fails the test with the install command: these tests are the format oracle and never skip.
/// </summary>
internal static class RocksDbTools
{
    private const int TimeoutMilliseconds = 60_000;

    public static (int ExitCode, string Stdout, string Stderr) Run(string tool, string? stdin, params string[] args)
    {
        var info = new ProcessStartInfo(tool)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = stdin != null,
            UseShellExecute = false,
        };
        foreach (string a in args)
        {
            info.ArgumentList.Add(a);
        }
        Process process;
        try
        {
            process = Process.Start(info) ?? throw new InvalidOperationException($"Could not start {tool}.");
        }
        catch (Win32Exception e)
        {
            throw new InvalidOperationException(
                $"RocksDB tool '{tool}' is not on PATH; install it with `apt-get install -y rocksdb-tools`.", e);
        }
        using (process)
        {
            Task<string> stdout = process.StandardOutput.ReadToEndAsync();
            Task<string> stderr = process.StandardError.ReadToEndAsync();
            if (stdin != null)
            {
                process.StandardInput.Write(stdin);
                process.StandardInput.Close();
            }
            if (!process.WaitForExit(TimeoutMilliseconds))
            {
                process.Kill(entireProcessTree: true);
                throw new TimeoutException($"{tool} {string.Join(' ', args)} did not finish in time.");
            }
            return (process.ExitCode, stdout.GetAwaiter().GetResult(), stderr.GetAwaiter().GetResult());
        }
    }

    /// <summary>Runs the tool and returns its standard output; fails the test on a non-zero exit.</summary>
    public static string RunOk(string tool, params string[] args) => RunOkWithInput(tool, null, args);

    public static string RunOkWithInput(string tool, string? stdin, params string[] args)
    {
        (int code, string output, string error) = Run(tool, stdin, args);
        Assert.True(code == 0, $"{tool} {string.Join(' ', args)} exited {code}: {error}{output}");
        return output;
    }
}
