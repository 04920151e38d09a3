using System.Runtime.CompilerServices;
using KvEngine.Versions;

using Version = KvEngine.Versions.Version;

namespace KvEngine.Compaction;

/// <summary>
/// A family's read-triggered compaction of level 0 (LevelDB's seek compaction, for level 0; see
/// <see cref="ColumnFamilyOptions.ReadTriggeredCompactionBytesPerMiss"/>): point lookups charge
/// the data-block reads from the file that a compaction of level 0 would have saved, and once the
/// charges reach the budget of the read state they read (the bytes a level-0 compaction would
/// read, divided by the bytes a miss is charged as) a compaction is requested; the picker runs it
/// when no size-triggered compaction is due.
/// <para>
/// Invariants: <see cref="Charge"/> returns true to exactly one caller per request (it then wakes
/// the background threads), and a request stays until a compaction of level 0 begins. While one
/// runs (<see cref="BeginLevel0Compaction"/> .. <see cref="EndLevel0Compaction"/>, whatever picked
/// it, manual ones included) charges are ignored, since they fall on the files it takes; both ends
/// clear the charges and the request. Once <see cref="Disable"/> ran (a read-only database, where
/// nothing compacts) nothing is charged.
/// </para>
/// <para>
/// Thread-safety: every member from any thread (atomics; no lock on the read path).
/// </para>
/// </summary>
internal sealed class Level0ReadCharges
{
    private long _misses;
    private int _requested; // 0 or 1
    private int _level0Compactions; // running compactions of level 0
    private volatile bool _disabled;

    /// <summary>Misses charged since level 0 was last compacted.</summary>
    public long Misses => Interlocked.Read(ref _misses);

    /// <summary>The charges reached a budget: a level-0 compaction is wanted.</summary>
    public bool Requested => Volatile.Read(ref _requested) != 0;

    /// <summary>True once <see cref="Disable"/> ran: read states carry no budget.</summary>
    public bool IsDisabled => _disabled;

    /// <summary>Nothing compacts here (a read-only database): read states get no budget.</summary>
    public void Disable() => _disabled = true;

    /// <summary>
    /// Adds <paramref name="misses"/>; true for the one caller whose charge made them reach
    /// <paramref name="budget"/> (it then wakes the background threads). Does nothing for no
    /// misses, for a read state without a budget (<see cref="long.MaxValue"/>: off, or nothing to
    /// compact), while a request is pending or while level 0 is being compacted.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)] // every Get calls it; almost all charge nothing
    public bool Charge(int misses, long budget) => misses > 0 && budget != long.MaxValue && ChargeMisses(misses, budget);

    private bool ChargeMisses(int misses, long budget)
    {
        if (Volatile.Read(ref _requested) != 0 || Volatile.Read(ref _level0Compactions) != 0)
        {
            return false;
        }
        long now = Interlocked.Add(ref _misses, misses);
        return now >= budget && Interlocked.CompareExchange(ref _requested, 1, 0) == 0;
    }

    /// <summary>A compaction of level 0 starts (any reason): charging pauses until it ends.</summary>
    public void BeginLevel0Compaction()
    {
        Interlocked.Increment(ref _level0Compactions);
        Clear();
    }

    /// <summary>The compaction of level 0 ended (installed or failed): charging starts over.</summary>
    public void EndLevel0Compaction()
    {
        Interlocked.Decrement(ref _level0Compactions);
        Clear();
    }

    private void Clear()
    {
        Interlocked.Exchange(ref _misses, 0);
        Volatile.Write(ref _requested, 0);
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
