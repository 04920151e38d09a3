using KvEngine.Format;
using KvEngine.Versions;

namespace KvEngine.Compaction;

/// <summary>
/// One picked compaction: input files of <see cref="StartLevel"/>, of the levels between it and
/// the output level (<see cref="MiddleInputs"/>: universal compaction merges several sorted runs)
/// and the overlapping files of <see cref="OutputLevel"/>, merged into new files of
/// <see cref="OutputLevel"/>, plus the files
/// of the level after the output level that overlap its range (the grandparents: they guide
/// where outputs are cut). Immutable once built; the picker marks its inputs as being compacted
/// until the database releases them.
/// </summary>
internal sealed class Compaction
{
    public Compaction(int startLevel, int outputLevel, FileMetaData[] startInputs, FileMetaData[] outputInputs,
        FileMetaData[] grandparents, CompactionOptions options, CompactionReason reason, bool inputCompressionMatchesOutput = true,
        CompactionInputLevel[]? middleInputs = null)
    {
        MiddleInputs = middleInputs ?? Array.Empty<CompactionInputLevel>();
        StartLevel = startLevel;
        OutputLevel = outputLevel;
        StartInputs = startInputs;
        OutputInputs = outputInputs;
        Grandparents = grandparents;
        Reason = reason;
        TargetFileSize = options.TargetFileSize(outputLevel);
        MaxCompactionBytes = options.MaxCompactionBytes;
        DynamicFileSize = options.LevelCompactionDynamicFileSize;
        (SmallestUserKey, LargestUserKey) = Range(startInputs, outputInputs);
        foreach (CompactionInputLevel middle in MiddleInputs)
        {
            (byte[] s, byte[] l) = Range(middle.Files, Array.Empty<FileMetaData>());
            if (s.AsSpan().SequenceCompareTo(SmallestUserKey) < 0)
            {
                SmallestUserKey = s;
            }
            if (l.AsSpan().SequenceCompareTo(LargestUserKey) > 0)
            {
                LargestUserKey = l;
            }
        }
        foreach (FileMetaData f in AllInputs())
        {
            InputBytes += (long)f.FileSize;
            InputFileCount++;
        }
        long gpBytes = 0;
        foreach (FileMetaData f in grandparents)
        {
            gpBytes += (long)f.FileSize;
        }
        IsTrivialMove = startLevel != outputLevel && startInputs.Length == 1 && outputInputs.Length == 0 && MiddleInputs.Length == 0 &&
            gpBytes <= MaxCompactionBytes && inputCompressionMatchesOutput &&
            !(reason == CompactionReason.ManualCompaction && options.HasCompactionFilter) &&
            reason != CompactionReason.PeriodicCompaction; // it exists to rewrite the file
    }

    public int StartLevel { get; }

    public int OutputLevel { get; }

    public FileMetaData[] StartInputs { get; }

    public FileMetaData[] OutputInputs { get; }

    /// <summary>Inputs of the levels strictly between the start and output levels, shallowest first (usually none).</summary>
    public CompactionInputLevel[] MiddleInputs { get; }

    public FileMetaData[] Grandparents { get; }

    public CompactionReason Reason { get; }

    /// <summary>Output file size target (RocksDB's for the output level; intra-level-0 FIFO: unbounded).</summary>
    public long TargetFileSize { get; init; }

    public long MaxCompactionBytes { get; }

    public bool DynamicFileSize { get; }

    public long InputBytes { get; }

    /// <summary>Input files of every level (start, middle and output).</summary>
    public int InputFileCount { get; }

    public byte[] SmallestUserKey { get; }

    public byte[] LargestUserKey { get; }

    /// <summary>
    /// One input file and nothing to merge it with, and the start level's codec is the output
    /// level's (RocksDB's InputCompressionMatchesOutput), and it is not a manual compaction with a
    /// compaction filter set, nor a periodic compaction: the MANIFEST just moves it down a level.
    /// Universal compaction with AllowTrivialMove sets it instead when no two input files overlap:
    /// every input then moves to the output level.
    /// </summary>
    public bool IsTrivialMove { get; init; }

    /// <summary>Universal's compression_size_percent: the outputs are written uncompressed.</summary>
    public bool DisableCompression { get; init; }

    /// <summary>Score of the start level when picked (0 for manual compactions).</summary>
    public double Score { get; init; }

    /// <summary>
    /// FIFO's deletion compaction: the inputs are dropped from the tree, nothing is read or written.
    /// </summary>
    public bool IsDeletion { get; init; }

    /// <summary>
    /// Round robin: the start level's new compact cursor (the largest internal key of the inputs),
    /// logged with the compaction's edit; null when the picker keeps no cursor.
    /// </summary>
    public byte[]? CompactCursor { get; init; }

    public IEnumerable<FileMetaData> AllInputs()
    {
        foreach (FileMetaData f in StartInputs)
        {
            yield return f;
        }
        foreach (CompactionInputLevel middle in MiddleInputs)
        {
            foreach (FileMetaData f in middle.Files)
            {
                yield return f;
            }
        }
        foreach (FileMetaData f in OutputInputs)
        {
            yield return f;
        }
    }

    /// <summary>Smallest and largest user keys over the files of both lists.</summary>
    public static (byte[] Smallest, byte[] Largest) Range(IReadOnlyList<FileMetaData> a, IReadOnlyList<FileMetaData> b)
    {
        byte[]? smallest = null;
        byte[]? largest = null;
        Extend(a, ref smallest, ref largest);
        Extend(b, ref smallest, ref largest);
        if (smallest == null || largest == null)
        {
            throw new ArgumentException("A compaction needs at least one input file.");
        }
        return (smallest, largest);
    }

    private static void Extend(IReadOnlyList<FileMetaData> files, ref byte[]? smallest, ref byte[]? largest)
    {
        foreach (FileMetaData f in files)
        {
            ReadOnlySpan<byte> s = InternalKeys.UserKey(f.Smallest);
            ReadOnlySpan<byte> l = InternalKeys.UserKey(f.Largest);
            if (smallest == null || s.SequenceCompareTo(smallest) < 0)
            {
                smallest = s.ToArray();
            }
            if (largest == null || l.SequenceCompareTo(largest) > 0)
            {
                largest = l.ToArray();
            }
        }
    }
}
