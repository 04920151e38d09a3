using KvEngine.Versions;

using Version = KvEngine.Versions.Version;

namespace KvEngine.Compaction;

/// <summary>
/// Compactions picked by the age of files rather than by sizes (RocksDB 7.8's TTL and periodic
/// compaction, VersionStorageInfo::ComputeExpiredTtlFiles and
/// ComputeFilesMarkedForPeriodicCompaction with LevelCompactionBuilder's picks), for leveled
/// compaction when no level needs one by size:
/// <list type="bullet">
/// <item>TTL: a file of a level above the last (and above the deepest non-empty level) whose
/// oldest data was flushed more than <see cref="CompactionOptions.Ttl"/> seconds ago
/// (oldest_ancester_time) is compacted into the next level (a level-0 file: level 0 into the base
/// level). A file nothing overlaps below moves down trivially, keeping its age, until it reaches
/// the deepest non-empty level.</item>
/// <item>Periodic: a file of any level written more than
/// <see cref="CompactionOptions.PeriodicCompactionSeconds"/> ago (file_creation_time, else
/// oldest_ancester_time; a file that records neither is never picked) is rewritten within its
/// level, so a compaction filter sees its entries. A level-0 file takes level 0 into the base
/// level instead (RocksDB rewrites it within level 0; merging level 0 down reaches the same
/// entries without reordering level 0).</item>
/// </list>
/// The times come from the picker's clock (the database's <see cref="KvOptions.TimeProvider"/>).
/// Not thread-safe: the database calls it under its mutex.
/// </summary>
internal sealed partial class CompactionPicker
{
    private readonly TimeProvider _clock;

    private ulong NowSeconds => (ulong)Math.Max(0, _clock.GetUtcNow().ToUnixTimeSeconds());

    /// <summary>
    /// The leveled compaction picked by age (TTL first, then periodic), not registered; null when
    /// no file is old enough or every old file is busy.
    /// </summary>
    private Compaction? PickLevelByAge(Version v)
    {
        if (_options.Ttl == 0 && _options.PeriodicCompactionSeconds == 0)
        {
            return null;
        }
        ulong now = NowSeconds;
        LevelTargets? targets = null;
        if (_options.Ttl > 0 && _options.Ttl < now)
        {
            ulong limit = now - _options.Ttl;
            int deepest = v.NumNonEmptyLevels - 1;
            for (int level = 0; level < Math.Min(_options.NumLevels - 1, deepest); level++)
            {
                IReadOnlyList<FileMetaData> files = v.Files(level);
                for (int i = 0; i < files.Count; i++)
                {
                    FileMetaData f = files[i];
                    if (_busy.Contains(f.Number) || f.OldestAncesterTime == 0 || f.OldestAncesterTime >= limit)
                    {
                        continue;
                    }
                    Compaction? c = level == 0
                        ? PickLevel0(v, targets ??= LevelTargets.Compute(v, _options), 0, CompactionReason.Ttl)
                        : PickAgedFile(v, level, i, level + 1, CompactionReason.Ttl);
                    if (c != null)
                    {
                        return c;
                    }
                    if (level == 0)
                    {
                        break; // level 0 goes down whole: its other files give the same answer
                    }
                }
            }
        }
        if (_options.PeriodicCompactionSeconds > 0 && _options.PeriodicCompactionSeconds < now)
        {
            ulong limit = now - _options.PeriodicCompactionSeconds;
            for (int level = 0; level < _options.NumLevels; level++)
            {
                IReadOnlyList<FileMetaData> files = v.Files(level);
                for (int i = 0; i < files.Count; i++)
                {
                    FileMetaData f = files[i];
                    if (_busy.Contains(f.Number) || !IsOlderThan(f, limit))
                    {
                        continue;
                    }
                    Compaction? c = level == 0
                        ? PickLevel0(v, targets ??= LevelTargets.Compute(v, _options), 0, CompactionReason.PeriodicCompaction)
                        : PickAgedFile(v, level, i, level, CompactionReason.PeriodicCompaction);
                    if (c != null)
                    {
                        return c;
                    }
                    if (level == 0)
                    {
                        break;
                    }
                }
            }
        }
        return null;
    }

    /// <summary>
    /// RocksDB's periodic-compaction age of a file: file_creation_time, else oldest_ancester_time;
    /// true when it is known and before <paramref name="limit"/>.
    /// </summary>
    internal static bool IsOlderThan(FileMetaData f, ulong limit)
    {
        ulong written = f.FileCreationTime != 0 ? f.FileCreationTime : f.OldestAncesterTime;
        return written != 0 && written < limit;
    }

    /// <summary>File <paramref name="index"/> of <paramref name="level"/> (above 0), cut cleanly, into <paramref name="outputLevel"/>.</summary>
    private Compaction? PickAgedFile(Version v, int level, int index, int outputLevel, CompactionReason reason)
    {
        IReadOnlyList<FileMetaData> files = v.Files(level);
        int lo = index;
        int hi = index;
        ExpandToCleanCut(files, ref lo, ref hi);
        return Build(v, level, outputLevel, Slice(files, lo, hi), reason, 0, expand: outputLevel != level);
    }

    /// <summary>
    /// FIFO's TTL deletion (RocksDB's FIFOCompactionPicker::PickTTLCompaction): from the oldest
    /// file, the files whose data is older than <see cref="CompactionOptions.Ttl"/> (by
    /// oldest_ancester_time, which is the table's creation_time property; a file with none stops
    /// the walk), provided what remains fits <see cref="CompactionOptions.FifoMaxTableFilesSize"/>
    /// (otherwise the size pick deletes more). Null when none qualifies.
    /// </summary>
    private Compaction? PickFifoTtl(Version v)
    {
        ulong now = NowSeconds;
        if (_options.Ttl == 0 || _options.Ttl >= now)
        {
            return null;
        }
        ulong limit = now - _options.Ttl;
        IReadOnlyList<FileMetaData> files = v.Files(0);
        long total = v.LevelBytes(0);
        var drop = new List<FileMetaData>();
        for (int i = files.Count - 1; i >= 0; i--)
        {
            FileMetaData f = files[i];
            if (f.OldestAncesterTime == 0 || f.OldestAncesterTime >= limit)
            {
                break;
            }
            total -= (long)f.FileSize;
            drop.Add(f);
        }
        if (drop.Count == 0 || total > _options.FifoMaxTableFilesSize)
        {
            return null;
        }
        return new Compaction(0, 0, drop.ToArray(), Array.Empty<FileMetaData>(), Array.Empty<FileMetaData>(), _options,
            CompactionReason.FifoTtl)
        {
            Score = FifoScore(v),
            IsDeletion = true,
        };
    }

    /// <summary>FIFO: level-0 files not being compacted whose data is older than the TTL (RocksDB's GetExpiredTtlFilesCount).</summary>
    private int FifoExpiredFiles(Version v)
    {
        ulong now = NowSeconds;
        if (_options.Ttl == 0 || _options.Ttl >= now)
        {
            return 0;
        }
        ulong limit = now - _options.Ttl;
        int count = 0;
        foreach (FileMetaData f in v.Files(0))
        {
            if (!_busy.Contains(f.Number) && f.OldestAncesterTime != 0 && f.OldestAncesterTime < limit)
            {
                count++;
            }
        }
        return count;
    }
}
