using System.Collections.Concurrent;
using System.Diagnostics;

namespace KvEngine.CrashTest;

/// <summary>
/// A kvstress child process and its output lines (stdout and stderr merged, in arrival order; a
/// null line marks the end). Thread-safe for one reader: the process's output events feed a
/// blocking queue.
/// </summary>
internal sealed class StressChild : IDisposable
{
    private readonly Process _process;
    private readonly BlockingCollection<string?> _lines = new();
    private int _openStreams = 2;

    public StressChild(string kvstress, IEnumerable<string> args)
    {
        var psi = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        psi.ArgumentList.Add(kvstress);
        foreach (string a in args)
        {
            psi.ArgumentList.Add(a);
        }
        _process = new Process { StartInfo = psi };
        _process.OutputDataReceived += (_, e) => Receive(e.Data);
        _process.ErrorDataReceived += (_, e) => Receive(e.Data);
        _process.Start();
        _process.BeginOutputReadLine();
        _process.BeginErrorReadLine();
    }

    public int ExitCode => _process.ExitCode;

    public int ProcessId => _process.Id;

    /// <summary>The next line, null at the end of output, or <paramref name="line"/> unset and false on timeout.</summary>
    public bool TryReadLine(TimeSpan timeout, out string? line) => _lines.TryTake(out line, timeout);

    /// <summary>SIGKILL (on Unix), then waits for the process to be gone.</summary>
    public void Kill()
    {
        try
        {
            _process.Kill(entireProcessTree: true);
        }
        catch (InvalidOperationException)
        {
            // It had already exited.
        }
        _process.WaitForExit();
    }

    /// <summary>Waits for the exit and the end of output.</summary>
    public void WaitForExit() => _process.WaitForExit();

    public void Dispose()
    {
        _process.Dispose();
        _lines.Dispose();
    }

    private void Receive(string? data)
    {
        if (data != null)
        {
            _lines.Add(data);
        }
        else if (Interlocked.Decrement(ref _openStreams) == 0)
        {
            _lines.Add(null);
        }
    }
}
