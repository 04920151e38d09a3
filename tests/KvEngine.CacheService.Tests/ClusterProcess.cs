using System.Diagnostics;
using System.Globalization;
using System.Text;

namespace KvEngine.CacheService.Tests;

/// <summary>
/// One cluster node as its own OS process (the sample's built KvEngine.CacheService.dll started
/// with <c>--cluster</c>), so a test can kill it like a crash (SIGKILL) and start it again on the
/// same directory. Its output is kept (last lines) for failure messages. Not thread-safe.
/// </summary>
internal sealed class ClusterProcess : IDisposable
{
    private readonly string[] _arguments;
    private readonly string _workingDirectory;
    private readonly StringBuilder _output = new();
    private Process? _process;

    public ClusterProcess(int self, IReadOnlyList<(int Http, int Raft)> ports, string dataDirectory, string workingDirectory)
    {
        Url = "http://127.0.0.1:" + ports[self].Http.ToString(CultureInfo.InvariantCulture);
        DataDirectory = dataDirectory;
        _workingDirectory = workingDirectory;
        var args = new List<string>
        {
            Path.Combine(AppContext.BaseDirectory, "KvEngine.CacheService.dll"),
            CacheServiceApp.ClusterFlag,
            "--urls", Url,
            "--Cluster:Self", self.ToString(CultureInfo.InvariantCulture),
            "--Cluster:DataDirectory", dataDirectory,
            "--Cluster:LowerElectionTimeout", "300",
            "--Cluster:UpperElectionTimeout", "600",
            "--Logging:LogLevel:Default", "Warning",
        };
        for (int i = 0; i < ports.Count; i++)
        {
            string prefix = "--Cluster:Members:" + i.ToString(CultureInfo.InvariantCulture);
            args.AddRange([prefix + ":Raft", "127.0.0.1:" + ports[i].Raft.ToString(CultureInfo.InvariantCulture),
                prefix + ":Http", "http://127.0.0.1:" + ports[i].Http.ToString(CultureInfo.InvariantCulture)]);
        }
        _arguments = [.. args];
    }

    public string Url { get; }

    public string DataDirectory { get; }

    public bool IsRunning => _process is { HasExited: false };

    public void Start()
    {
        string host = Environment.ProcessPath is { } p && Path.GetFileNameWithoutExtension(p) == "dotnet" ? p : "dotnet";
        var info = new ProcessStartInfo(host, _arguments)
        {
            WorkingDirectory = _workingDirectory,
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        _process = Process.Start(info) ?? throw new InvalidOperationException("The node process did not start.");
        _process.OutputDataReceived += (_, e) => Keep(e.Data);
        _process.ErrorDataReceived += (_, e) => Keep(e.Data);
        _process.BeginOutputReadLine();
        _process.BeginErrorReadLine();
    }

    /// <summary>SIGKILL: no shutdown code runs, as in a crash.</summary>
    public void Kill()
    {
        if (_process is { } process)
        {
            process.Kill(entireProcessTree: true);
            process.WaitForExit();
            process.Dispose();
            _process = null;
        }
    }

    public string LastOutput()
    {
        lock (_output)
        {
            return _output.ToString();
        }
    }

    private void Keep(string? line)
    {
        if (line is null)
        {
            return;
        }
        lock (_output)
        {
            _output.AppendLine(line);
            if (_output.Length > 20_000)
            {
                _output.Remove(0, _output.Length - 10_000);
            }
        }
    }

    public void Dispose() => Kill();
}
