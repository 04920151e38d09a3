using KvEngine.Versions;

using Version = KvEngine.Versions.Version;

namespace KvEngine.Compaction;

/// <summary>
/// FIFO compaction (RocksDB's FIFOCompactionPicker; its TTL deletion is in CompactionPicker.Age.cs). Every file stays in
/// level 0, newest first. When the files' total size exceeds FifoMaxTableFilesSize, one deletion
/// compaction drops the oldest files until the rest fit. Otherwise, with FifoAllowCompaction, an
/// intra-level-0 compaction merges the newest run of files (RocksDB's FindIntraL0Compaction): from
/// the newest file, files join while the bytes per file removed do not grow and the total stays
/// within MaxCompactionBytes; the run needs Level0FileNumCompactionTrigger files and a mean below
/// 1.1 x WriteBufferSize (so files already merged are not merged again and again). Only one FIFO
/// compaction runs at a time.
/// </summary>
internal sealed partial class CompactionPicker
{
    /// <summary>Level-0 score under FIFO: bytes / limit, and with compaction allowed files / trigger.</summary>
    private double FifoScore(Version v)
    {
        double score = (double)v.LevelBytes(0) / _options.FifoMaxTableFilesSize;
        if (_options.FifoAllowCompaction)
        {
            score = Math.Max(score, (double)v.NumFiles(0) / _options.Level0FileNumCompactionTrigger);
        }
        if (_options.Ttl > 0)
        {
            score = Math.Max(score, FifoExpiredFiles(v));
        }
        return score;
    }

    /// <summary>
    /// FIFO's "compaction pending": the size limit is exceeded, or (compaction allowed) a run of
    /// level-0 files qualifies for merging. Unlike the score, never true while nothing can be picked.
    /// </summary>
    private bool FifoNeedsCompaction(Version v) =>
        v.LevelBytes(0) > _options.FifoMaxTableFilesSize ||
        (_running.Count == 0 && PickFifoTtl(v) != null) ||
        (_options.FifoAllowCompaction && FindIntraLevel0Run(v.Files(0), _options.Level0FileNumCompactionTrigger,
            MaxBytesPerDeletedFile, _options.MaxCompactionBytes) > 0);

    private long MaxBytesPerDeletedFile => (long)Math.Min(long.MaxValue / 2, _options.WriteBufferSize * 1.1);

    private Compaction? PickFifo(Version v)
    {
        IReadOnlyList<FileMetaData> files = v.Files(0);
        if (files.Count == 0 || _running.Count > 0)
        {
            return null;
        }
        if (PickFifoTtl(v) is { } expired)
        {
            return expired;
        }
        long total = v.LevelBytes(0);
        if (total > _options.FifoMaxTableFilesSize)
        {
            var drop = new List<FileMetaData>();
            for (int i = files.Count - 1; i >= 0 && total > _options.FifoMaxTableFilesSize; i--)
            {
                drop.Add(files[i]);
                total -= (long)files[i].FileSize;
            }
            return new Compaction(0, 0, drop.ToArray(), Array.Empty<FileMetaData>(), Array.Empty<FileMetaData>(), _options,
                CompactionReason.FifoMaxSize)
            {
                Score = FifoScore(v),
                IsDeletion = true,
            };
        }
        if (!_options.FifoAllowCompaction)
        {
            return null;
        }
        int count = FindIntraLevel0Run(files, _options.Level0FileNumCompactionTrigger, MaxBytesPerDeletedFile,
            _options.MaxCompactionBytes);
        if (count == 0)
        {
            return null;
        }
        var inputs = new FileMetaData[count];
        for (int i = 0; i < count; i++)
        {
            inputs[i] = files[i];
        }
        return new Compaction(0, 0, inputs, Array.Empty<FileMetaData>(), Array.Empty<FileMetaData>(), _options,
            CompactionReason.FifoReduceNumFiles)
        {
            Score = FifoScore(v),
            TargetFileSize = long.MaxValue, // one output: level-0 files are ordered by their newest entry
        };
    }

    /// <summary>
    /// Length of the newest run of level-0 files worth merging, or 0: files join from the newest
    /// while the mean bytes per file stays level or falls and the total stays within
    /// <paramref name="maxCompactionBytes"/>; the run needs at least <paramref name="minFiles"/>
    /// files and a mean below <paramref name="maxBytesPerDeletedFile"/>.
    /// </summary>
    internal static int FindIntraLevel0Run(IReadOnlyList<FileMetaData> newestFirst, int minFiles, long maxBytesPerDeletedFile,
        long maxCompactionBytes)
    {
        if (newestFirst.Count == 0)
        {
            return 0;
        }
        long bytes = (long)newestFirst[0].FileSize;
        long perDeleted = long.MaxValue;
        int limit = 1;
        for (; limit < newestFirst.Count; limit++)
        {
            bytes += (long)newestFirst[limit].FileSize;
            long next = bytes / limit;
            if (next > perDeleted || bytes > maxCompactionBytes)
            {
                break;
            }
            perDeleted = next;
        }
        return limit >= minFiles && perDeleted < maxBytesPerDeletedFile ? limit : 0;
    }
}
