using System.Diagnostics;
using System.Globalization;

namespace KvEngine.Tool;

/// <summary>
/// Progress of a long command on stderr: a line at most once a second while it runs
/// (<c>scan: 1200000 entries, 96.0 MiB, 3.2 s</c>) and a closing line with the totals. Silent
/// unless <see cref="ToolContext.ShowProgress"/> (stderr is a terminal, or --progress). The clock is
/// read every 4096 items, so a tick costs an increment. Not thread-safe.
/// </summary>
internal sealed class Progress
{
    private readonly ToolContext _context;
    private readonly string _what;
    private readonly Stopwatch _clock = Stopwatch.StartNew();
    private long _lastReportTicks;
    private long _count;
    private long _bytes;

    public Progress(ToolContext context, string what)
    {
        _context = context;
        _what = what;
    }

    public long Count => _count;

    /// <summary>One more item of <paramref name="bytes"/> bytes.</summary>
    public void Tick(long bytes)
    {
        _count++;
        _bytes += bytes;
        if (_context.ShowProgress && (_count & 4095) == 0 && _clock.ElapsedTicks - _lastReportTicks >= Stopwatch.Frequency)
        {
            _lastReportTicks = _clock.ElapsedTicks;
            Report(final: false);
        }
    }

    /// <summary>A phase of a command without items (a repair's steps).</summary>
    public void Phase(string text)
    {
        if (_context.ShowProgress)
        {
            _context.Error.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{_what}: {text} ({_clock.Elapsed.TotalSeconds:F1} s)"));
        }
    }

    /// <summary>The closing line.</summary>
    public void Finish()
    {
        if (_context.ShowProgress)
        {
            Report(final: true);
        }
    }

    private void Report(bool final) =>
        _context.Error.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"{_what}: {_count} entries, {_bytes / 1048576.0:F1} MiB, {_clock.Elapsed.TotalSeconds:F1} s{(final ? ", done" : "")}"));
}
