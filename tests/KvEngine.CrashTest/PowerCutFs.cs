using System.Diagnostics;

namespace KvEngine.CrashTest;

/// <summary>
/// One mount of powercutfs (powercut/powercutfs.c, compiled here with cc and libfuse3): a FUSE file
/// system that keeps every file's durable content apart from its volatile content and every
/// directory's durable entries apart from its volatile ones, and at <see cref="Cut"/> freezes and
/// keeps only what fsync and directory fsync made durable. <see cref="Unmount"/> ends the daemon,
/// which saves the surviving state (after a cut: the durable one; else: everything) to its save
/// directory; the next mount loads it. Not thread-safe; owned by the power-cut runner.
/// </summary>
internal sealed class PowerCutFs : IDisposable
{
    /// <summary>The exit code kvcrashtest uses when FUSE is not usable on this machine.</summary>
    public const int UnavailableExitCode = 4;

    private static readonly TimeSpan s_mountTimeout = TimeSpan.FromSeconds(30);

    private readonly Process _daemon;
    private readonly System.Text.StringBuilder _log = new();

    private PowerCutFs(Process daemon, string mountPoint)
    {
        _daemon = daemon;
        MountPoint = mountPoint;
    }

    public string MountPoint { get; }

    /// <summary>The daemon's stderr so far (its closing line says what it saved).</summary>
    public string Log
    {
        get
        {
            lock (_log)
            {
                return _log.ToString();
            }
        }
    }

    /// <summary>
    /// Compiles powercutfs.c (shipped next to kvcrashtest) into <paramref name="dir"/>; throws
    /// <see cref="FuseUnavailableException"/> when /dev/fuse, a C compiler or libfuse3 is missing.
    /// </summary>
    public static string Build(string dir)
    {
        if (!File.Exists("/dev/fuse"))
        {
            throw new FuseUnavailableException("/dev/fuse does not exist");
        }
        string source = Path.Combine(AppContext.BaseDirectory, "powercut", "powercutfs.c");
        if (!File.Exists(source))
        {
            throw new ArgumentException($"{source} is missing (it is copied next to kvcrashtest by its build)");
        }
        if (!File.Exists("/usr/include/fuse3/fuse.h"))
        {
            throw new FuseUnavailableException("libfuse3's headers are not installed (Debian: apt-get install fuse3 libfuse3-dev)");
        }
        string binary = Path.Combine(dir, "powercutfs");
        (int code, string output) = RunTool("cc", ["-O2", "-Wall", "-o", binary, source, "-I/usr/include/fuse3", "-lfuse3", "-lpthread"]);
        if (code != 0)
        {
            throw new FuseUnavailableException("could not compile powercutfs.c: " + output);
        }
        return binary;
    }

    /// <summary>
    /// Mounts at <paramref name="mountPoint"/> with the state in <paramref name="image"/> (null: empty),
    /// saving to <paramref name="save"/> at unmount; <paramref name="lieFsyncSuffix"/> makes the fsync of
    /// files with that name ending a no-op (a lying disk, to show losses are caught);
    /// <paramref name="keepUnsyncedOneIn"/> &gt; 0 lets each unsynced data page survive the cut with
    /// that inverse probability (drawn from <paramref name="seed"/>).
    /// </summary>
    public static PowerCutFs Mount(string binary, string mountPoint, string? image, string save, string? lieFsyncSuffix, int keepUnsyncedOneIn = 0, long seed = 0)
    {
        Unmount(mountPoint, lazy: true); // a mount left by an earlier, aborted run
        Directory.CreateDirectory(mountPoint);
        var psi = new ProcessStartInfo(binary) { RedirectStandardError = true, RedirectStandardOutput = true, UseShellExecute = false };
        if (image != null)
        {
            psi.ArgumentList.Add("--image");
            psi.ArgumentList.Add(image);
        }
        psi.ArgumentList.Add("--save");
        psi.ArgumentList.Add(save);
        if (lieFsyncSuffix != null)
        {
            psi.ArgumentList.Add("--lie-fsync");
            psi.ArgumentList.Add(lieFsyncSuffix);
        }
        if (keepUnsyncedOneIn > 0)
        {
            psi.ArgumentList.Add("--keep-unsynced-one-in");
            psi.ArgumentList.Add(keepUnsyncedOneIn.ToString(System.Globalization.CultureInfo.InvariantCulture));
            psi.ArgumentList.Add("--seed");
            psi.ArgumentList.Add(seed.ToString(System.Globalization.CultureInfo.InvariantCulture));
        }
        psi.ArgumentList.Add(mountPoint);
        psi.ArgumentList.Add("-f");
        var daemon = new Process { StartInfo = psi };
        var fs = new PowerCutFs(daemon, mountPoint);
        daemon.ErrorDataReceived += (_, e) => fs.Append(e.Data);
        daemon.OutputDataReceived += (_, e) => fs.Append(e.Data);
        daemon.Start();
        daemon.BeginErrorReadLine();
        daemon.BeginOutputReadLine();
        var sw = Stopwatch.StartNew();
        while (!File.Exists(fs.ControlPath))
        {
            if (daemon.HasExited)
            {
                daemon.WaitForExit();
                throw new FuseUnavailableException($"powercutfs could not mount {mountPoint} (exit {daemon.ExitCode}): {fs.Log.Trim()}");
            }
            if (sw.Elapsed > s_mountTimeout)
            {
                fs.Dispose();
                throw new TimeoutException($"powercutfs did not mount {mountPoint} within {s_mountTimeout}: {fs.Log.Trim()}");
            }
            Thread.Sleep(10); // waiting for the mount to appear, not a test verdict
        }
        return fs;
    }

    private string ControlPath => Path.Combine(MountPoint, ".powercut");

    /// <summary>The power cut: from its return on, every request fails and nothing more becomes durable. Returns the daemon's counters.</summary>
    public string Cut() => File.ReadAllText(ControlPath).Trim();

    /// <summary>Unmounts and waits for the daemon to save the surviving state and exit; throws when it did not.</summary>
    public void Unmount()
    {
        Unmount(MountPoint, lazy: false);
        if (!_daemon.WaitForExit(TimeSpan.FromSeconds(120)))
        {
            throw new TimeoutException("powercutfs did not exit after the unmount: " + Log);
        }
        _daemon.WaitForExit();
        if (_daemon.ExitCode != 0 || !Log.Contains("saved the", StringComparison.Ordinal))
        {
            throw new InvalidOperationException($"powercutfs exited with code {_daemon.ExitCode}: {Log}");
        }
    }

    public void Dispose()
    {
        if (!_daemon.HasExited)
        {
            Unmount(MountPoint, lazy: true);
            if (!_daemon.WaitForExit(TimeSpan.FromSeconds(30)))
            {
                _daemon.Kill();
            }
        }
        _daemon.Dispose();
    }

    private static void Unmount(string mountPoint, bool lazy)
    {
        string full = Path.GetFullPath(mountPoint).TrimEnd('/');
        if (!File.ReadAllLines("/proc/mounts").Any(l => l.Split(' ') is [_, string m, ..] && m == full))
        {
            return;
        }
        for (int attempt = 0; ; attempt++)
        {
            (int code, string output) = RunTool("umount", lazy ? ["-l", full] : [full]);
            if (code == 0)
            {
                return;
            }
            if (attempt == 50)
            {
                throw new InvalidOperationException($"umount {full} failed: {output}");
            }
            Thread.Sleep(100); // a killed writer's files may take a moment to close
        }
    }

    private static (int Code, string Output) RunTool(string file, string[] args)
    {
        var psi = new ProcessStartInfo(file) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (string a in args)
        {
            psi.ArgumentList.Add(a);
        }
        try
        {
            using Process p = Process.Start(psi)!;
            Task<string> err = p.StandardError.ReadToEndAsync();
            string output = p.StandardOutput.ReadToEnd();
            p.WaitForExit();
            return (p.ExitCode, output + err.Result);
        }
        catch (System.ComponentModel.Win32Exception e)
        {
            throw new FuseUnavailableException($"cannot run {file}: {e.Message}");
        }
    }

    private void Append(string? line)
    {
        if (line != null)
        {
            lock (_log)
            {
                _log.AppendLine(line);
            }
        }
    }
}
