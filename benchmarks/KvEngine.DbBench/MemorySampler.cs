using System.Diagnostics;
using Microsoft.Win32.SafeHandles;

namespace KvEngine.DbBench;

/// <summary>
/// Watches the resident set on a background thread (every <c>-memory_sample_ms</c>) and, each
/// time it passes the highest value seen so far by at least <see cref="StepBytes"/>, takes a
/// <see cref="MemorySnapshot"/>: so at the end <see cref="AtPeak"/> says what the memory was made of
/// when it was highest (the operating system's own high-water mark, VmHWM, can fall between two
/// samples; kvbench prints both). A sample reads /proc/self/statm into a stack buffer and allocates
/// nothing; a snapshot allocates (the engine's property strings), at most once per
/// <see cref="StepBytes"/> of growth. Where /proc/self/statm is missing (not Linux) it samples
/// <see cref="Process.WorkingSet64"/>, which allocates.
/// <para>
/// Thread-safety: the engine is read under <c>gate</c>, which the runner also holds while it opens
/// or closes the engine; <see cref="Phase"/> may be set from any thread. <see cref="Dispose"/> stops
/// the thread and must come before the engine is disposed.
/// </para>
/// </summary>
internal sealed class MemorySampler : IDisposable
{
    /// <summary>Growth of the resident set that triggers a new snapshot.</summary>
    public const long StepBytes = 1 << 20;

    private readonly object _gate;
    private readonly Func<EngineMemory> _engine;
    private readonly int _intervalMs;
    private readonly SafeFileHandle? _statm;
    private readonly long _pageSize = Environment.SystemPageSize;
    private readonly long _start = Stopwatch.GetTimestamp();
    private readonly ManualResetEventSlim _stop = new();
    private readonly Thread _thread;
    private volatile string _phase = "open";
    private long _peakRss;
    private MemorySnapshot _atPeak;

    /// <param name="gate">Held while the engine is read (and by the runner while it opens or closes it).</param>
    /// <param name="engine">The engine's figures; called under <paramref name="gate"/>.</param>
    /// <param name="intervalMs">Milliseconds between samples (at least 1).</param>
    public MemorySampler(object gate, Func<EngineMemory> engine, int intervalMs)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(intervalMs, 1);
        _gate = gate;
        _engine = engine;
        _intervalMs = intervalMs;
        try
        {
            _statm = File.OpenHandle("/proc/self/statm");
        }
        catch (IOException)
        {
            _statm = null;
        }
        catch (UnauthorizedAccessException)
        {
            _statm = null;
        }
        _thread = new Thread(Loop) { IsBackground = true, Name = "kvbench memory sampler" };
        _thread.Start();
    }

    public int IntervalMs => _intervalMs;

    /// <summary>What is running now (a benchmark's name), recorded with each snapshot.</summary>
    public string Phase
    {
        get => _phase;
        set => _phase = value;
    }

    /// <summary>The snapshot at the highest resident set sampled (default before the first sample).</summary>
    public MemorySnapshot AtPeak
    {
        get
        {
            lock (_gate)
            {
                return _atPeak;
            }
        }
    }

    /// <summary>A snapshot now (reads the engine under the gate).</summary>
    public MemorySnapshot Capture() => Capture(ReadRss());

    private MemorySnapshot Capture(long rss)
    {
        GCMemoryInfo gc = GC.GetGCMemoryInfo();
        ReadOnlySpan<GCGenerationInfo> gens = gc.GenerationInfo;
        long loh = gens.Length > 3 ? gens[3].SizeAfterBytes : 0;
        EngineMemory engine;
        lock (_gate)
        {
            engine = _engine();
        }
        return new MemorySnapshot(rss, GC.GetTotalMemory(forceFullCollection: false), gc.TotalCommittedBytes, loh, engine, _phase, Stopwatch.GetElapsedTime(_start).TotalSeconds);
    }

    /// <summary>The resident set now, in bytes.</summary>
    public long ReadRss()
    {
        if (_statm == null)
        {
            using Process self = Process.GetCurrentProcess();
            return self.WorkingSet64;
        }
        // statm: "size resident shared text lib data dt", in pages.
        Span<byte> text = stackalloc byte[128];
        int n = RandomAccess.Read(_statm, text, 0);
        int i = 0;
        while (i < n && text[i] != ' ')
        {
            i++;
        }
        long pages = 0;
        for (i++; i < n && text[i] is >= (byte)'0' and <= (byte)'9'; i++)
        {
            pages = pages * 10 + (text[i] - '0');
        }
        return pages * _pageSize;
    }

    private void Loop()
    {
        while (!_stop.Wait(_intervalMs))
        {
            long rss = ReadRss();
            if (rss >= _peakRss + StepBytes || (_peakRss == 0 && rss > 0))
            {
                MemorySnapshot s = Capture(rss);
                lock (_gate)
                {
                    if (rss > _peakRss)
                    {
                        _peakRss = rss;
                        _atPeak = s;
                    }
                }
            }
        }
    }

    public void Dispose()
    {
        if (!_stop.IsSet)
        {
            _stop.Set();
            _thread.Join();
            _statm?.Dispose();
        }
    }
}
