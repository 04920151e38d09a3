using KvEngine.Versions;

using Version = KvEngine.Versions.Version;

namespace KvEngine.Compaction;

/// <summary>
/// A family's read-triggered compaction of level 0 (LevelDB's seek compaction, for level 0; see
/// <see cref="ColumnFamilyOptions.ReadTriggeredCompactionBytesPerMiss"/>): point lookups charge
/// the level-0 files they searched in vain (a data block read, the key not there), and once the
/// charges since level 0 was last picked reach the version's budget (the bytes a level-0
/// compaction would read, divided by the bytes a miss is charged as) a compaction is requested;
/// the picker runs it when no size-triggered compaction is due.
/// <para>
/// Invariants: <see cref="Charge"/> returns true to exactly one caller per crossing of the budget
/// (the one whose charge crossed it), which then wakes the background threads; the request stays
/// until <see cref="Reset"/>, which the database calls whenever it picks a compaction of level 0,
/// for whatever reason (the charges were for files that compaction takes).
/// </para>
/// <para>
/// Thread-safety: <see cref="Charge"/> from any reader (one atomic add; no lock on the read path);
/// <see cref="Reset"/> and <see cref="Requested"/> under the database mutex.
/// </para>
/// </summary>
internal sealed class Level0ReadCharges
{
    private long _misses;
    private volatile bool _requested;

    /// <summary>Misses charged since level 0 was last picked.</summary>
    public long Misses => Interlocked.Read(ref _misses);

    /// <summary>The charges reached a budget: a level-0 compaction is wanted.</summary>
    public bool Requested => _requested;

    /// <summary>
    /// Adds <paramref name="misses"/>; true when they cross <paramref name="budget"/> (the caller
    /// then wakes the background threads), false otherwise.
    /// </summary>
    public bool Charge(int misses, long budget)
    {
        long now = Interlocked.Add(ref _misses, misses);
        if (now >= budget && now - misses < budget)
        {
            _requested = true;
            return true;
        }
        return false;
    }

    /// <summary>Level 0 was picked for a compaction: charging starts over.</summary>
    public void Reset()
    {
        Interlocked.Exchange(ref _misses, 0);
        _requested = false;
    }

    /// <summary>
    /// The misses after which a compaction of <paramref name="version"/>'s level 0 is worth its
    /// cost: the bytes it would read (level 0 and the base-level files in level 0's key range) over
    /// the bytes one miss is charged as; <see cref="long.MaxValue"/> when level 0 is empty or
    /// read-triggered compaction is off or not leveled.
    /// </summary>
    public static long Budget(Version version, CompactionOptions options)
    {
        if (options.ReadTriggeredCompactionBytesPerMiss <= 0 || options.Style != CompactionStyle.Level ||
            options.DisableAutoCompactions || version.NumFiles(0) == 0)
        {
            return long.MaxValue;
        }
        long bytes = version.LevelBytes(0);
        (byte[] smallest, byte[] largest) = Compaction.Range(version.LevelFiles(0), Array.Empty<FileMetaData>());
        int baseLevel = LevelTargets.Compute(version, options).BaseLevel;
        var overlapping = new List<FileMetaData>();
        version.GetOverlappingFiles(baseLevel, smallest, largest, overlapping);
        foreach (FileMetaData f in overlapping)
        {
            bytes += (long)f.FileSize;
        }
        return Math.Max(1, bytes / options.ReadTriggeredCompactionBytesPerMiss);
    }
}
