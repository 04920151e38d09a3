using KvEngine.Format;
using KvEngine.Versions;

using Version = KvEngine.Versions.Version;

namespace KvEngine.Compaction;

/// <summary>
/// Picks leveled compactions the way RocksDB's LevelCompactionPicker does (FIFO's picks are in
/// CompactionPicker.Fifo.cs, universal's in CompactionPicker.Universal.cs, those by file age, TTL
/// and periodic, in CompactionPicker.Age.cs):
/// <list type="bullet">
/// <item>Scores: level 0 = max(files not being compacted / Level0FileNumCompactionTrigger,
/// level-0 bytes / MaxBytesForLevelBase); level i (1..n-2) = bytes not being compacted / target.
/// The highest score &gt;= 1 whose files can be picked wins.</item>
/// <item>Level 0 compacts all its files into the base level; another level compacts, by
/// <see cref="CompactionPri"/>, the free file with the fewest overlapping next-level bytes per byte
/// (kMinOverlappingRatio) or the next file after the level's compact cursor (kRoundRobin), expanded so no user key is split across the input
/// boundary (a clean cut), plus the overlapping files of the next level (also clean-cut), then grown
/// on the start level while that adds no output-level file and stays under MaxCompactionBytes.</item>
/// <item>Files being compacted are never picked again, and no two running compactions write
/// overlapping key ranges of the same level.</item>
/// </list>
/// Not thread-safe: the database calls it under its mutex. Round robin keeps each level's cursor
/// in memory from the moment of the pick and in the MANIFEST with the compaction's edit, so after a
/// reopen it continues from the version's cursor.
/// </summary>
internal sealed partial class CompactionPicker
{
    private readonly CompactionOptions _options;
    private readonly byte[]?[] _compactPointer;
    private readonly HashSet<ulong> _busy = new();
    private readonly List<Compaction> _running = new();

    public CompactionPicker(CompactionOptions options, TimeProvider? clock = null)
    {
        _options = options;
        _clock = clock ?? TimeProvider.System;
        _compactPointer = new byte[options.NumLevels][];
    }

    public CompactionOptions Options => _options;

    public int RunningCount => _running.Count;

    public bool IsBeingCompacted(ulong fileNumber) => _busy.Contains(fileNumber);

    /// <summary>Score of every level but the last (index = level), as RocksDB computes it.</summary>
    public double[] ComputeScores(Version v, LevelTargets targets)
    {
        var scores = new double[_options.NumLevels - 1];
        if (_options.Style != CompactionStyle.Level)
        {
            scores[0] = _options.Style == CompactionStyle.Fifo ? FifoScore(v) : UniversalScore(v);
            return scores;
        }
        int l0Files = 0;
        long l0Bytes = 0;
        foreach (FileMetaData f in v.Files(0))
        {
            if (!_busy.Contains(f.Number))
            {
                l0Files++;
                l0Bytes += (long)f.CompensatedFileSize;
            }
        }
        scores[0] = Math.Max((double)l0Files / _options.Level0FileNumCompactionTrigger,
            (double)l0Bytes / _options.MaxBytesForLevelBase);
        for (int level = 1; level < scores.Length; level++)
        {
            long bytes = 0;
            foreach (FileMetaData f in v.Files(level))
            {
                if (!_busy.Contains(f.Number))
                {
                    bytes += (long)f.CompensatedFileSize;
                }
            }
            long target = targets.MaxBytesForLevel(level);
            scores[level] = target == long.MaxValue ? 0 : (double)bytes / target;
        }
        return scores;
    }

    /// <summary>True when some level's score is at least 1 (RocksDB's "compaction pending").</summary>
    public bool NeedsCompaction(Version v)
    {
        if (_options.Style == CompactionStyle.Fifo)
        {
            return FifoNeedsCompaction(v);
        }
        if (_options.Style == CompactionStyle.Universal)
        {
            return PickUniversal(v) != null; // never true while nothing can be picked
        }
        foreach (double s in ComputeScores(v, LevelTargets.Compute(v, _options)))
        {
            if (s >= 1)
            {
                return true;
            }
        }
        return PickLevelByAge(v) != null; // TTL or periodic (never true while nothing can be picked)
    }

    /// <summary>
    /// The most urgent compaction whose files are free, registered as running; null when no level
    /// needs one or every candidate is busy. Release it with <see cref="Release"/>.
    /// </summary>
    public Compaction? Pick(Version v)
    {
        if (_options.Style != CompactionStyle.Level)
        {
            Compaction? picked = _options.Style == CompactionStyle.Fifo ? PickFifo(v) : PickUniversal(v);
            if (picked != null)
            {
                Register(picked);
            }
            return picked;
        }
        LevelTargets targets = LevelTargets.Compute(v, _options);
        double[] scores = ComputeScores(v, targets);
        var order = new int[scores.Length];
        for (int i = 0; i < order.Length; i++)
        {
            order[i] = i;
        }
        // Highest score first; ties favour the shallower level (a stable order).
        Array.Sort(order, (a, b) => scores[a] != scores[b] ? scores[b].CompareTo(scores[a]) : a.CompareTo(b));
        foreach (int level in order)
        {
            if (scores[level] < 1)
            {
                break;
            }
            Compaction? c = level == 0 ? PickLevel0(v, targets, scores[0]) : PickLevel(v, level, scores[level]);
            if (c != null)
            {
                Register(c);
                return c;
            }
        }
        Compaction? aged = PickLevelByAge(v);
        if (aged != null)
        {
            Register(aged);
        }
        return aged;
    }

    /// <summary>
    /// A manual compaction of the files of <paramref name="level"/> that overlap [begin, end] and
    /// lie after the user key <paramref name="after"/> (exclusive; null = from the start), into
    /// <paramref name="outputLevel"/>. Files of a level above 0 are taken in key order up to
    /// MaxCompactionBytes per compaction. Registers it when picked.
    /// </summary>
    public ManualPickResult PickManual(Version v, int level, int outputLevel, byte[]? begin, byte[]? end, byte[]? after,
        out Compaction? compaction)
    {
        compaction = null;
        var found = new List<FileMetaData>();
        v.GetOverlappingFiles(level, begin, end, found);
        if (after != null)
        {
            found.RemoveAll(f => InternalKeys.UserKey(f.Smallest).SequenceCompareTo(after) <= 0);
        }
        if (found.Count == 0)
        {
            return ManualPickResult.NothingToDo;
        }
        List<FileMetaData> inputs;
        if (level == 0)
        {
            inputs = found;
        }
        else
        {
            IReadOnlyList<FileMetaData> files = v.Files(level);
            int lo = IndexOf(files, found[0]);
            int hi = lo;
            long bytes = (long)files[lo].FileSize;
            while (hi + 1 < files.Count && found.Contains(files[hi + 1]) && bytes < _options.MaxCompactionBytes)
            {
                hi++;
                bytes += (long)files[hi].FileSize;
            }
            ExpandToCleanCut(files, ref lo, ref hi);
            inputs = Slice(files, lo, hi);
        }
        Compaction? c = Build(v, level, outputLevel, inputs, CompactionReason.ManualCompaction, 0, expand: false);
        if (c == null)
        {
            return ManualPickResult.Conflict;
        }
        Register(c);
        compaction = c;
        return ManualPickResult.Picked;
    }

    /// <summary>
    /// True when a running compaction writes into <paramref name="level"/> a key range meeting
    /// user keys [<paramref name="smallest"/>, <paramref name="largest"/>] (RocksDB's
    /// RangeOverlapWithCompaction): a file ingested there could overlap its outputs.
    /// </summary>
    public bool RangeOverlapsRunningOutput(int level, ReadOnlySpan<byte> smallest, ReadOnlySpan<byte> largest)
    {
        foreach (Compaction r in _running)
        {
            if (r.OutputLevel == level &&
                smallest.SequenceCompareTo(r.LargestUserKey) <= 0 && largest.SequenceCompareTo(r.SmallestUserKey) >= 0)
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>Marks the compaction's inputs free again; call once it is installed or abandoned.</summary>
    public void Release(Compaction c)
    {
        _running.Remove(c);
        foreach (FileMetaData f in c.AllInputs())
        {
            _busy.Remove(f.Number);
        }
    }

    private void Register(Compaction c)
    {
        _running.Add(c);
        foreach (FileMetaData f in c.AllInputs())
        {
            _busy.Add(f.Number);
        }
    }

    /// <summary>
    /// A read-triggered compaction (<see cref="Level0ReadCharges"/>): every level-0 file into the
    /// base level, as a size-triggered one but whatever the score, registered as running; null
    /// when level 0 is empty or busy, or the style is not leveled.
    /// </summary>
    public Compaction? PickLevel0ForReads(Version v)
    {
        if (_options.Style != CompactionStyle.Level)
        {
            return null;
        }
        LevelTargets targets = LevelTargets.Compute(v, _options);
        Compaction? c = PickLevel0(v, targets, score: 0, CompactionReason.ReadTriggered);
        if (c != null)
        {
            Register(c);
        }
        return c;
    }

    private Compaction? PickLevel0(Version v, LevelTargets targets, double score, CompactionReason reason = CompactionReason.Level0FilesNum)
    {
        IReadOnlyList<FileMetaData> files = v.Files(0);
        if (files.Count == 0)
        {
            return null;
        }
        foreach (FileMetaData f in files)
        {
            if (_busy.Contains(f.Number))
            {
                return null; // one level-0 compaction at a time, as in RocksDB
            }
        }
        var inputs = new List<FileMetaData>(files);
        return Build(v, 0, targets.BaseLevel, inputs, reason, score, expand: false);
    }

    private Compaction? PickLevel(Version v, int level, double score)
    {
        IReadOnlyList<FileMetaData> files = v.Files(level);
        if (files.Count == 0)
        {
            return null;
        }
        bool roundRobin = _options.Pri == CompactionPri.RoundRobin;
        int[] order = roundRobin ? RoundRobinOrder(files, _compactPointer[level] ?? v.CompactCursor(level))
            : MinOverlappingRatioOrder(files, v.Files(level + 1));
        foreach (int i in order)
        {
            if (_busy.Contains(files[i].Number))
            {
                continue;
            }
            int lo = i;
            int hi = i;
            ExpandToCleanCut(files, ref lo, ref hi);
            List<FileMetaData> inputs = Slice(files, lo, hi);
            Compaction? c = Build(v, level, level + 1, inputs, CompactionReason.LevelMaxLevelSize, score, expand: true,
                recordCursor: roundRobin);
            if (c != null)
            {
                if (roundRobin)
                {
                    _compactPointer[level] = c.CompactCursor;
                }
                return c;
            }
        }
        return null;
    }

    /// <summary>File indexes starting after the first file whose largest key is past the cursor, wrapping.</summary>
    private static int[] RoundRobinOrder(IReadOnlyList<FileMetaData> files, byte[]? cursor)
    {
        int start = 0;
        if (cursor != null)
        {
            while (start < files.Count && InternalKeyComparer.Compare(files[start].Largest, cursor) <= 0)
            {
                start++;
            }
            if (start == files.Count)
            {
                start = 0;
            }
        }
        var order = new int[files.Count];
        for (int k = 0; k < order.Length; k++)
        {
            order[k] = (start + k) % files.Count;
        }
        return order;
    }

    /// <summary>
    /// RocksDB's kMinOverlappingRatio order: file indexes by (bytes of the next level's files that
    /// overlap the file's user-key range) x 1024 / (the file's size), ascending; ties in key order.
    /// Both levels are sorted and disjoint, so one forward sweep finds every overlap.
    /// </summary>
    internal static int[] MinOverlappingRatioOrder(IReadOnlyList<FileMetaData> files, IReadOnlyList<FileMetaData> next)
    {
        var ratios = new ulong[files.Count];
        var order = new int[files.Count];
        int j = 0;
        for (int i = 0; i < files.Count; i++)
        {
            order[i] = i;
            ReadOnlySpan<byte> smallest = InternalKeys.UserKey(files[i].Smallest);
            ReadOnlySpan<byte> largest = InternalKeys.UserKey(files[i].Largest);
            while (j < next.Count && InternalKeys.UserKey(next[j].Largest).SequenceCompareTo(smallest) < 0)
            {
                j++;
            }
            ulong overlap = 0;
            // The last overlapping file may also overlap the following input file: do not consume it.
            for (int k = j; k < next.Count && InternalKeys.UserKey(next[k].Smallest).SequenceCompareTo(largest) <= 0; k++)
            {
                overlap += next[k].FileSize;
            }
            ratios[i] = overlap * 1024 / Math.Max(1UL, files[i].CompensatedFileSize);
        }
        Array.Sort(ratios, order);
        // Array.Sort is not stable: restore key order among equal ratios.
        int runStart = 0;
        for (int i = 1; i <= order.Length; i++)
        {
            if (i == order.Length || ratios[i] != ratios[runStart])
            {
                Array.Sort(order, runStart, i - runStart);
                runStart = i;
            }
        }
        return order;
    }

    /// <summary>
    /// Adds output-level files, optionally grows the start level, checks that nothing is busy and
    /// that no running compaction writes an overlapping range of the output level. Null when the
    /// candidate conflicts.
    /// </summary>
    private Compaction? Build(Version v, int level, int outputLevel, List<FileMetaData> inputs, CompactionReason reason,
        double score, bool expand, bool recordCursor = false)
    {
        if (AnyBusy(inputs))
        {
            return null;
        }
        List<FileMetaData> outputs = new();
        if (outputLevel != level)
        {
            (byte[] smallest, byte[] largest) = Compaction.Range(inputs, Array.Empty<FileMetaData>());
            outputs = OverlappingCleanCut(v, outputLevel, smallest, largest);
            if (AnyBusy(outputs))
            {
                return null;
            }
            if (expand && outputs.Count > 0 && level > 0)
            {
                TryExpandStartLevel(v, level, outputLevel, ref inputs, outputs);
            }
        }
        (byte[] lo, byte[] hi) = Compaction.Range(inputs, outputs);
        foreach (Compaction r in _running)
        {
            if (r.OutputLevel == outputLevel &&
                lo.AsSpan().SequenceCompareTo(r.LargestUserKey) <= 0 && hi.AsSpan().SequenceCompareTo(r.SmallestUserKey) >= 0)
            {
                return null;
            }
        }
        var grandparents = new List<FileMetaData>();
        for (int g = outputLevel + 1; g < _options.NumLevels && grandparents.Count == 0; g++)
        {
            v.GetOverlappingFiles(g, lo, hi, grandparents);
        }
        // RocksDB's GetCompressionType: a level at or below the deepest non-empty one is bottommost.
        bool compressionMatches = !_options.BottommostCompressionDiffers ||
            (level >= v.NumNonEmptyLevels - 1) == (outputLevel >= v.NumNonEmptyLevels - 1);
        return new Compaction(level, outputLevel, inputs.ToArray(), outputs.ToArray(), grandparents.ToArray(), _options, reason,
            compressionMatches)
        {
            Score = score,
            CompactCursor = recordCursor ? inputs[^1].Largest : null,
        };
    }

    /// <summary>
    /// RocksDB's SetupOtherInputs expansion: take every start-level file in the combined range if
    /// that pulls in no further output-level file and the total stays below MaxCompactionBytes.
    /// </summary>
    private void TryExpandStartLevel(Version v, int level, int outputLevel, ref List<FileMetaData> inputs, List<FileMetaData> outputs)
    {
        (byte[] smallest, byte[] largest) = Compaction.Range(inputs, outputs);
        List<FileMetaData> expanded = OverlappingCleanCut(v, level, smallest, largest);
        if (expanded.Count <= inputs.Count || AnyBusy(expanded))
        {
            return;
        }
        long total = Bytes(expanded) + Bytes(outputs);
        if (total >= _options.MaxCompactionBytes)
        {
            return;
        }
        (byte[] s2, byte[] l2) = Compaction.Range(expanded, Array.Empty<FileMetaData>());
        List<FileMetaData> outputs2 = OverlappingCleanCut(v, outputLevel, s2, l2);
        if (outputs2.Count == outputs.Count)
        {
            inputs = expanded;
        }
    }

    private static List<FileMetaData> OverlappingCleanCut(Version v, int level, byte[] smallest, byte[] largest)
    {
        var found = new List<FileMetaData>();
        v.GetOverlappingFiles(level, smallest, largest, found);
        if (level == 0 || found.Count == 0)
        {
            return found;
        }
        IReadOnlyList<FileMetaData> files = v.Files(level);
        int lo = IndexOf(files, found[0]);
        int hi = IndexOf(files, found[^1]);
        ExpandToCleanCut(files, ref lo, ref hi);
        return Slice(files, lo, hi);
    }

    /// <summary>Grows [lo, hi] while a neighbouring file shares a boundary user key.</summary>
    internal static void ExpandToCleanCut(IReadOnlyList<FileMetaData> files, ref int lo, ref int hi)
    {
        while (lo > 0 && InternalKeys.UserKey(files[lo - 1].Largest).SequenceEqual(InternalKeys.UserKey(files[lo].Smallest)))
        {
            lo--;
        }
        while (hi + 1 < files.Count && InternalKeys.UserKey(files[hi].Largest).SequenceEqual(InternalKeys.UserKey(files[hi + 1].Smallest)))
        {
            hi++;
        }
    }

    private static int IndexOf(IReadOnlyList<FileMetaData> files, FileMetaData f)
    {
        for (int i = 0; i < files.Count; i++)
        {
            if (ReferenceEquals(files[i], f))
            {
                return i;
            }
        }
        throw new InvalidOperationException($"File {f.Number} is not in its level.");
    }

    private static List<FileMetaData> Slice(IReadOnlyList<FileMetaData> files, int lo, int hi)
    {
        var list = new List<FileMetaData>(hi - lo + 1);
        for (int i = lo; i <= hi; i++)
        {
            list.Add(files[i]);
        }
        return list;
    }

    private bool AnyBusy(List<FileMetaData> files)
    {
        foreach (FileMetaData f in files)
        {
            if (_busy.Contains(f.Number))
            {
                return true;
            }
        }
        return false;
    }

    private static long Bytes(List<FileMetaData> files)
    {
        long sum = 0;
        foreach (FileMetaData f in files)
        {
            sum += (long)f.FileSize;
        }
        return sum;
    }
}
