using System.Diagnostics;
using System.Globalization;
using System.Text;

using Version = KvEngine.Versions.Version;
using KvEngine.Versions;

namespace KvEngine.Compaction;

/// <summary>
/// Per-level flush and compaction statistics since open, printed as RocksDB's "rocksdb.stats"
/// property prints them (the compaction table, "Flush(GB)" and "Cumulative compaction" lines that
/// db_bench reports). Flushes count as writes into level 0, as in RocksDB, so the cumulative
/// compaction line includes them. Thread-safe: one lock guards the numbers.
/// </summary>
internal sealed class CompactionStatistics
{
    private const double Gb = 1024.0 * 1024 * 1024;
    private const double Mb = 1024.0 * 1024;

    private readonly object _gate = new();
    private readonly LevelCompactionStats[] _levels;
    private readonly Stopwatch _uptime = Stopwatch.StartNew();
    private long _flushBytes;
    private long _readTriggered;

    public CompactionStatistics(int numLevels)
    {
        _levels = new LevelCompactionStats[numLevels];
        for (int i = 0; i < numLevels; i++)
        {
            _levels[i] = new LevelCompactionStats();
        }
    }

    public void AddFlush(long bytesWritten, long micros)
    {
        lock (_gate)
        {
            _flushBytes += bytesWritten;
            LevelCompactionStats l0 = _levels[0];
            l0.Count++;
            l0.Micros += micros;
            l0.BytesWritten += bytesWritten;
        }
    }

    public void AddCompaction(int outputLevel, LevelCompactionStats s, bool readTriggered = false)
    {
        lock (_gate)
        {
            _levels[outputLevel].Add(s);
            if (readTriggered)
            {
                _readTriggered++;
            }
        }
    }

    /// <summary>A copy of one level's numbers.</summary>
    public LevelCompactionStats Level(int level)
    {
        lock (_gate)
        {
            var copy = new LevelCompactionStats();
            copy.Add(_levels[level]);
            return copy;
        }
    }

    /// <summary>Sum over all levels, flushes included.</summary>
    public LevelCompactionStats Sum()
    {
        lock (_gate)
        {
            var sum = new LevelCompactionStats();
            foreach (LevelCompactionStats l in _levels)
            {
                sum.Add(l);
            }
            return sum;
        }
    }

    /// <summary>The "rocksdb.stats" text for <paramref name="v"/>.</summary>
    /// <param name="v">Current version.</param>
    /// <param name="scores">Compaction score per level (shorter arrays print 0 for the rest).</param>
    /// <param name="beingCompacted">Files being compacted per level.</param>
    /// <param name="familyName">The column family the statistics are of (RocksDB names it in the header).</param>
    public string Format(Version v, double[] scores, int[] beingCompacted, string familyName)
    {
        var sb = new StringBuilder();
        CultureInfo c = CultureInfo.InvariantCulture;
        double uptime = Math.Max(_uptime.Elapsed.TotalSeconds, 1e-3);
        sb.Append("\n** Compaction Stats [").Append(familyName).Append("] **\n");
        sb.Append("Level    Files   Size     Score Read(GB)  Rn(GB) Rnp1(GB) Write(GB) Wnew(GB) Moved(GB) W-Amp Rd(MB/s) Wr(MB/s) Comp(sec) CompMergeCPU(sec) Comp(cnt) Avg(sec) KeyIn KeyDrop\n");
        sb.Append(new string('-', 170)).Append('\n');
        var sum = new LevelCompactionStats();
        int totalFiles = 0;
        int totalBusy = 0;
        long totalBytes = 0;
        long flushBytes;
        lock (_gate)
        {
            flushBytes = _flushBytes;
            for (int level = 0; level < _levels.Length; level++)
            {
                LevelCompactionStats s = _levels[level];
                int files = v.NumFiles(level);
                if (files == 0 && s.Count == 0)
                {
                    continue;
                }
                long bytes = v.LevelBytes(level);
                double score = level < scores.Length ? scores[level] : 0;
                AppendRow(sb, c, $"L{level}", files, beingCompacted[level], bytes, score, s, WriteAmp(s));
                sum.Add(s);
                totalFiles += files;
                totalBusy += beingCompacted[level];
                totalBytes += bytes;
            }
        }
        double sumWriteAmp = sum.BytesWritten / (double)(flushBytes + 1);
        AppendRow(sb, c, "Sum", totalFiles, totalBusy, totalBytes, 0, sum, sumWriteAmp);
        sb.Append(c, $"\nUptime(secs): {uptime:F1} total, {uptime:F1} interval\n");
        sb.Append(c, $"Flush(GB): cumulative {flushBytes / Gb:F3}, interval {flushBytes / Gb:F3}\n");
        long read = sum.BytesReadNonOutput + sum.BytesReadOutput;
        sb.Append(c,
            $"Cumulative compaction: {sum.BytesWritten / Gb:F2} GB write, {sum.BytesWritten / Mb / uptime:F2} MB/s write, {read / Gb:F2} GB read, {read / Mb / uptime:F2} MB/s read, {sum.Micros / 1e6:F1} seconds\n");
        AppendCuts(sb, c);
        lock (_gate)
        {
            if (_readTriggered > 0)
            {
                // KvEngine's line (RocksDB has no read-triggered compaction): see Level0ReadCharges.
                sb.Append(c, $"Read-triggered compactions of level 0: {_readTriggered}\n");
            }
        }
        return sb.ToString();
    }

    // KvEngine's line (RocksDB has none): why compaction outputs were cut, per output level.
    private void AppendCuts(StringBuilder sb, CultureInfo c)
    {
        lock (_gate)
        {
            bool any = false;
            for (int level = 1; level < _levels.Length; level++)
            {
                long[] cuts = _levels[level].Cuts;
                if (cuts[0] + cuts[1] + cuts[2] + cuts[3] == 0)
                {
                    continue;
                }
                sb.Append(any ? "; " : "Output cuts (max size, max compaction bytes, skipped file, pre-cut): ");
                sb.Append(c, $"L{level} {cuts[0]} {cuts[1]} {cuts[2]} {cuts[3]}");
                any = true;
            }
            if (any)
            {
                sb.Append('\n');
            }
        }
    }

    private static double WriteAmp(LevelCompactionStats s) =>
        s.BytesReadNonOutput == 0 ? 0 : s.BytesWritten / (double)s.BytesReadNonOutput;

    private static void AppendRow(StringBuilder sb, CultureInfo c, string name, int files, int busy, long bytes, double score,
        LevelCompactionStats s, double writeAmp)
    {
        double seconds = s.Micros / 1e6;
        double read = s.BytesReadNonOutput + s.BytesReadOutput;
        double secondsForRate = Math.Max(seconds, 1e-6);
        sb.Append(c, $"{name,4} {files,6}/{busy,-3} {FormatBytes(bytes, c),8} {score,5:F1} {read / Gb,8:F1} {s.BytesReadNonOutput / Gb,7:F1} ");
        sb.Append(c, $"{s.BytesReadOutput / Gb,8:F1} {s.BytesWritten / Gb,9:F1} {(s.BytesWritten - s.BytesReadOutput) / Gb,8:F1} {s.BytesMoved / Gb,9:F1} ");
        sb.Append(c, $"{writeAmp,5:F1} {(seconds > 0 ? read / Mb / secondsForRate : 0),8:F1} {(seconds > 0 ? s.BytesWritten / Mb / secondsForRate : 0),8:F1} ");
        sb.Append(c, $"{seconds,9:F2} {seconds,17:F2} {s.Count,9} {(s.Count == 0 ? 0 : seconds / s.Count),8:F3} {s.KeysIn,7} {s.KeysDropped,6}\n");
    }

    /// <summary>RocksDB's BytesToHumanString: "123.45 MB".</summary>
    private static string FormatBytes(long bytes, CultureInfo c) => bytes switch
    {
        >= 1L << 40 => string.Format(c, "{0:F2} TB", bytes / (double)(1L << 40)),
        >= 1L << 30 => string.Format(c, "{0:F2} GB", bytes / Gb),
        >= 1L << 20 => string.Format(c, "{0:F2} MB", bytes / Mb),
        >= 1L << 10 => string.Format(c, "{0:F2} KB", bytes / 1024.0),
        _ => string.Format(c, "{0} B", bytes),
    };
}
