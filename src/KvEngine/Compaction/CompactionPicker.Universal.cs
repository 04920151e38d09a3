using KvEngine.Format;
using KvEngine.Versions;

using Version = KvEngine.Versions.Version;

namespace KvEngine.Compaction;

/// <summary>
/// Universal compaction (RocksDB 7.8's UniversalCompactionPicker, non-incremental). The tree is a
/// list of sorted runs, newest first: each level-0 file, then each non-empty level
/// (<see cref="SortedRuns"/>). The picks, in RocksDB's order:
/// <list type="number">
/// <item>Periodic: some file is older than PeriodicCompactionSeconds (which a TTL sets too): the
/// runs from the newest free one after the last busy one, through the oldest, merge into the last
/// level.</item>
/// <item>With at least Level0FileNumCompactionTrigger runs: size amplification (the runs but the
/// oldest, from the first free one, against the oldest: at least MaxSizeAmplificationPercent
/// percent merges them all into the last level), then size ratio (the first series of
/// MinMergeWidth..MaxMergeWidth consecutive free runs each at most SizeRatio percent larger than
/// what precedes it, by StopStyle), then run count (enough of the newest runs to get below the
/// trigger, whatever their sizes).</item>
/// </list>
/// A pick of runs [i, j] writes to the last level when j is the oldest run, to level 0 when run
/// j+1 is a level-0 file, and otherwise to the level just above run j+1's. Outputs at level 0 are
/// one file; deeper ones are cut at the level's target file size. Only size-ratio picks honour
/// CompressionSizePercent (uncompressed output while the older runs hold less than that share).
/// With AllowTrivialMove, a pick whose input files overlap nowhere (and level 0 overlaps nowhere,
/// when it is an input) moves them instead, except periodic ones and outputs into level 0.
/// Snapshots and range tombstones are kept by the compaction job as for every style: an output
/// that is not the bottom (level 0, or with older runs below) keeps what older runs might need.
/// Not thread-safe: the database calls it under its mutex.
/// </summary>
internal sealed partial class CompactionPicker
{
    /// <summary>The sorted runs of <paramref name="v"/>, newest first (RocksDB's CalculateSortedRuns).</summary>
    internal List<SortedRun> SortedRuns(Version v)
    {
        var runs = new List<SortedRun>();
        foreach (FileMetaData f in v.Files(0))
        {
            runs.Add(new SortedRun(0, f, f.FileSize, f.CompensatedFileSize, _busy.Contains(f.Number)));
        }
        for (int level = 1; level < _options.NumLevels; level++)
        {
            ulong size = 0;
            ulong compensated = 0;
            bool busy = false;
            foreach (FileMetaData f in v.Files(level))
            {
                size += f.FileSize;
                compensated += f.CompensatedFileSize;
                busy |= _busy.Contains(f.Number);
            }
            if (compensated > 0)
            {
                runs.Add(new SortedRun(level, null, size, compensated, busy));
            }
        }
        return runs;
    }

    /// <summary>Level-0 score under universal compaction: runs not being compacted / the trigger.</summary>
    private double UniversalScore(Version v)
    {
        int runs = 0;
        foreach (FileMetaData f in v.Files(0))
        {
            if (!_busy.Contains(f.Number))
            {
                runs++;
            }
        }
        for (int level = 1; level < _options.NumLevels; level++)
        {
            IReadOnlyList<FileMetaData> files = v.Files(level);
            if (files.Count > 0 && !_busy.Contains(files[0].Number))
            {
                runs++;
            }
        }
        return (double)runs / _options.Level0FileNumCompactionTrigger;
    }

    /// <summary>The universal compaction due now, not registered; null when none is.</summary>
    private Compaction? PickUniversal(Version v)
    {
        List<SortedRun> runs = SortedRuns(v);
        List<(int Level, FileMetaData File)> periodic = FilesDueForPeriodicCompaction(v);
        int trigger = _options.Level0FileNumCompactionTrigger;
        if (runs.Count == 0 || (periodic.Count == 0 && runs.Count < trigger))
        {
            return null;
        }
        double score = UniversalScore(v);
        Compaction? c = periodic.Count > 0 ? PickUniversalPeriodic(v, runs, periodic, score) : null;
        if (c == null && runs.Count >= trigger)
        {
            c = PickToReduceSizeAmp(v, runs, score) ??
                PickToReduceSortedRuns(v, runs, _options.Universal.SizeRatio, int.MaxValue, score);
            if (c == null)
            {
                int free = 0;
                foreach (SortedRun r in runs)
                {
                    if (!r.BeingCompacted)
                    {
                        free++;
                    }
                }
                if (free > trigger)
                {
                    c = PickToReduceSortedRuns(v, runs, int.MaxValue, free - trigger + 1, score);
                }
            }
        }
        return c;
    }

    /// <summary>
    /// RocksDB's ComputeFilesMarkedForPeriodicCompaction: the free files of every level written
    /// more than PeriodicCompactionSeconds ago.
    /// </summary>
    private List<(int Level, FileMetaData File)> FilesDueForPeriodicCompaction(Version v)
    {
        var due = new List<(int, FileMetaData)>();
        ulong now = NowSeconds;
        if (_options.PeriodicCompactionSeconds == 0 || _options.PeriodicCompactionSeconds >= now)
        {
            return due;
        }
        ulong limit = now - _options.PeriodicCompactionSeconds;
        for (int level = 0; level < _options.NumLevels; level++)
        {
            foreach (FileMetaData f in v.Files(level))
            {
                if (!_busy.Contains(f.Number) && IsOlderThan(f, limit))
                {
                    due.Add((level, f));
                }
            }
        }
        return due;
    }

    private Compaction? PickUniversalPeriodic(Version v, List<SortedRun> runs, List<(int Level, FileMetaData File)> due, double score)
    {
        int start = runs.Count;
        while (start > 0 && !runs[start - 1].BeingCompacted)
        {
            start--;
        }
        if (start == runs.Count)
        {
            return null;
        }
        if (start == runs.Count - 1)
        {
            // Only the oldest run is free: rewrite it only if it holds a file that is due.
            SortedRun last = runs[start];
            bool includesDue = false;
            foreach ((int level, FileMetaData f) in due)
            {
                if (last.Level != 0 ? level == last.Level : ReferenceEquals(f, last.File))
                {
                    includesDue = true;
                    break;
                }
            }
            if (!includesDue)
            {
                return null;
            }
        }
        return PickSortedRunRange(v, runs, start, runs.Count - 1, CompactionReason.PeriodicCompaction, score);
    }

    /// <summary>RocksDB's PickCompactionToReduceSizeAmp (non-incremental).</summary>
    private Compaction? PickToReduceSizeAmp(Version v, List<SortedRun> runs, double score)
    {
        if (runs[^1].BeingCompacted)
        {
            return null;
        }
        int start = -1;
        for (int i = 0; i + 1 < runs.Count; i++)
        {
            if (!runs[i].BeingCompacted)
            {
                start = i;
                break;
            }
        }
        if (start < 0)
        {
            return null;
        }
        ulong candidateSize = 0;
        int candidates = 0;
        for (int i = start; i < runs.Count - 1; i++)
        {
            if (runs[i].BeingCompacted)
            {
                return null; // a newer run is being merged: no size amplification pick possible
            }
            candidateSize += runs[i].CompensatedSize;
            candidates++;
        }
        ulong baseSize = runs[^1].Size;
        if (candidates == 0 || (UInt128)candidateSize * 100 < (UInt128)(ulong)_options.Universal.MaxSizeAmplificationPercent * baseSize)
        {
            return null;
        }
        return PickSortedRunRange(v, runs, start, runs.Count - 1, CompactionReason.UniversalSizeAmplification, score);
    }

    /// <summary>
    /// RocksDB's PickCompactionToReduceSortedRuns: the first series of free consecutive runs, from
    /// the newest, where each next run joins while it is at most <paramref name="ratio"/> percent
    /// larger than what was picked (the total so far, or with SimilarSize the last run, which must
    /// also be at most that much larger than it), between MinMergeWidth (at least 2) and
    /// min(MaxMergeWidth, <paramref name="maxRuns"/>) runs.
    /// </summary>
    private Compaction? PickToReduceSortedRuns(Version v, List<SortedRun> runs, int ratio, int maxRuns, double score)
    {
        CompactionOptionsUniversal u = _options.Universal;
        int maxWidth = Math.Min(u.MaxMergeWidth, maxRuns);
        int minWidth = Math.Max(u.MinMergeWidth, 2);
        bool similar = u.StopStyle == CompactionStopStyle.SimilarSize;
        int start = 0;
        int count = 0;
        bool done = false;
        for (int loop = 0; loop < runs.Count; loop++)
        {
            count = 0;
            while (loop < runs.Count && runs[loop].BeingCompacted)
            {
                loop++;
            }
            if (loop == runs.Count)
            {
                break;
            }
            count = 1;
            double candidateSize = runs[loop].CompensatedSize;
            for (int i = loop + 1; count < maxWidth && i < runs.Count; i++)
            {
                SortedRun next = runs[i];
                if (next.BeingCompacted)
                {
                    break;
                }
                if (candidateSize * (100.0 + ratio) / 100.0 < next.Size)
                {
                    break;
                }
                if (similar)
                {
                    if (next.Size * (100.0 + ratio) / 100.0 < candidateSize)
                    {
                        break; // a lonely small run: a later pick (or the run count) takes it
                    }
                    candidateSize = next.CompensatedSize;
                }
                else
                {
                    candidateSize += next.CompensatedSize;
                }
                count++;
            }
            if (count >= minWidth)
            {
                start = loop;
                done = true;
                break;
            }
        }
        if (!done || count <= 1)
        {
            return null;
        }
        int firstAfter = start + count;
        bool compress = true;
        if (u.CompressionSizePercent >= 0)
        {
            ulong total = 0;
            foreach (SortedRun r in runs)
            {
                total += r.CompensatedSize;
            }
            ulong older = 0;
            for (int i = runs.Count - 1; i >= firstAfter; i--)
            {
                older += runs[i].Size;
                if ((UInt128)older * 100 >= (UInt128)total * (ulong)u.CompressionSizePercent)
                {
                    compress = false;
                    break;
                }
            }
        }
        int outputLevel = firstAfter == runs.Count ? _options.NumLevels - 1
            : runs[firstAfter].Level == 0 ? 0
            : runs[firstAfter].Level - 1;
        CompactionReason reason = maxRuns == int.MaxValue ? CompactionReason.UniversalSizeRatio : CompactionReason.UniversalSortedRunNum;
        return BuildUniversal(v, runs, start, firstAfter - 1, outputLevel, reason, score, disableCompression: !compress);
    }

    /// <summary>RocksDB's PickCompactionWithSortedRunRange: runs [start, end], compressed, into the level their successor leaves.</summary>
    private Compaction? PickSortedRunRange(Version v, List<SortedRun> runs, int start, int end, CompactionReason reason, double score)
    {
        int outputLevel = end == runs.Count - 1 ? _options.NumLevels - 1 : runs[end + 1].Level - 1;
        return BuildUniversal(v, runs, start, end, outputLevel, reason, score, disableCompression: false);
    }

    /// <summary>
    /// The compaction of runs [start, end] into <paramref name="outputLevel"/>; null when a running
    /// compaction writes an overlapping range of that level (RocksDB's FilesRangeOverlapWithCompaction).
    /// </summary>
    private Compaction? BuildUniversal(Version v, List<SortedRun> runs, int start, int end, int outputLevel, CompactionReason reason,
        double score, bool disableCompression)
    {
        int startLevel = runs[start].Level;
        var level0 = new List<FileMetaData>();
        var levels = new List<int>();
        for (int i = start; i <= end; i++)
        {
            if (runs[i].Level == 0)
            {
                level0.Add(runs[i].File!);
            }
            else
            {
                levels.Add(runs[i].Level);
            }
        }
        return BuildMultiLevel(v, startLevel, level0, levels, outputLevel, reason, score, disableCompression);
    }

    /// <summary>
    /// A compaction of <paramref name="level0"/> (level-0 files) and every file of
    /// <paramref name="levels"/> (ascending, none deeper than <paramref name="outputLevel"/>) into
    /// <paramref name="outputLevel"/>; null when a running compaction writes an overlapping range
    /// of the output level.
    /// </summary>
    private Compaction? BuildMultiLevel(Version v, int startLevel, List<FileMetaData> level0, List<int> levels, int outputLevel,
        CompactionReason reason, double score, bool disableCompression)
    {
        FileMetaData[] startInputs = startLevel == 0 ? level0.ToArray() : ToArray(v.Files(startLevel));
        var middle = new List<CompactionInputLevel>();
        FileMetaData[] outputInputs = Array.Empty<FileMetaData>();
        foreach (int level in levels)
        {
            if (level == startLevel)
            {
                continue;
            }
            if (level == outputLevel)
            {
                outputInputs = ToArray(v.Files(level));
            }
            else
            {
                middle.Add(new CompactionInputLevel(level, ToArray(v.Files(level))));
            }
        }
        var c = new Compaction(startLevel, outputLevel, startInputs, outputInputs, Array.Empty<FileMetaData>(), _options, reason,
            middleInputs: middle.ToArray())
        {
            Score = score,
            // RocksDB's max_file_size for universal: level 0 unlimited (one output), deeper levels by target.
            TargetFileSize = outputLevel == 0 ? long.MaxValue : _options.TargetFileSize(outputLevel),
            DisableCompression = disableCompression,
            IsTrivialMove = false,
        };
        if (outputLevel != 0)
        {
            foreach (Compaction r in _running)
            {
                if (r.OutputLevel == outputLevel && c.SmallestUserKey.AsSpan().SequenceCompareTo(r.LargestUserKey) <= 0 &&
                    c.LargestUserKey.AsSpan().SequenceCompareTo(r.SmallestUserKey) >= 0)
                {
                    return null;
                }
            }
        }
        bool trivial = _options.Universal.AllowTrivialMove && outputLevel != 0 && startLevel != outputLevel &&
            reason is not (CompactionReason.PeriodicCompaction or CompactionReason.ManualCompaction) &&
            (startLevel != 0 || !AnyOverlap(v.Files(0))) && !AnyOverlap(c.AllInputs());
        return trivial ? CopyAsTrivialMove(c) : c;
    }

    private Compaction CopyAsTrivialMove(Compaction c) =>
        new(c.StartLevel, c.OutputLevel, c.StartInputs, c.OutputInputs, c.Grandparents, _options, c.Reason, middleInputs: c.MiddleInputs)
        {
            Score = c.Score,
            TargetFileSize = c.TargetFileSize,
            IsTrivialMove = true,
        };

    /// <summary>True when two of the files share a user key (RocksDB's IsInputFilesNonOverlapping, negated).</summary>
    internal static bool AnyOverlap(IEnumerable<FileMetaData> files)
    {
        var sorted = new List<FileMetaData>(files);
        sorted.Sort(static (a, b) => InternalKeys.UserKey(a.Smallest).SequenceCompareTo(InternalKeys.UserKey(b.Smallest)));
        for (int i = 1; i < sorted.Count; i++)
        {
            if (InternalKeys.UserKey(sorted[i - 1].Largest).SequenceCompareTo(InternalKeys.UserKey(sorted[i].Smallest)) >= 0)
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>
    /// Universal's manual compaction (RocksDB's CompactRange with kCompactAllLevels): every file
    /// of every level into the last level, whatever the range asked; registered when picked.
    /// </summary>
    public ManualPickResult PickUniversalManual(Version v, out Compaction? compaction)
    {
        compaction = null;
        int startLevel = 0;
        while (startLevel < _options.NumLevels && v.NumFiles(startLevel) == 0)
        {
            startLevel++;
        }
        if (startLevel == _options.NumLevels)
        {
            return ManualPickResult.NothingToDo;
        }
        var levels = new List<int>();
        for (int level = startLevel; level < _options.NumLevels; level++)
        {
            foreach (FileMetaData f in v.Files(level))
            {
                if (_busy.Contains(f.Number))
                {
                    return ManualPickResult.Conflict;
                }
            }
            if (level > 0 && v.NumFiles(level) > 0)
            {
                levels.Add(level);
            }
        }
        var level0 = new List<FileMetaData>(v.Files(0));
        Compaction? c = BuildMultiLevel(v, startLevel, level0, levels, _options.NumLevels - 1, CompactionReason.ManualCompaction, 0,
            disableCompression: false);
        if (c == null)
        {
            return ManualPickResult.Conflict;
        }
        Register(c);
        compaction = c;
        return ManualPickResult.Picked;
    }

    private static FileMetaData[] ToArray(IReadOnlyList<FileMetaData> files)
    {
        var array = new FileMetaData[files.Count];
        for (int i = 0; i < array.Length; i++)
        {
            array[i] = files[i];
        }
        return array;
    }
}
