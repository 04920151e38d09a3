using KvEngine.Versions;

namespace KvEngine.Db.Read;

/// <summary>
/// What one point lookup's walk over a version's files read from disk (LevelDB's
/// Version::GetStats), returned by <see cref="FilePicker.Stats"/> rather than learned from a
/// side channel: the first file whose data block had to come from the file (not the block cache)
/// and its level, and what the read-triggered compaction of level 0
/// (<see cref="Compaction.Level0ReadCharges"/>) is charged (<see cref="Level0Charge"/>).
/// <para>Invariants: <see cref="SeekFile"/> is null exactly when <see cref="SeekFileLevel"/> is -1. A plain value; not shared.</para>
/// </summary>
internal struct GetStats
{
    /// <summary>The first file probed that read a data block from its file, or null.</summary>
    public FileMetaData? SeekFile;

    /// <summary>The level of <see cref="SeekFile"/>; -1 when there is none.</summary>
    public int SeekFileLevel;

    /// <summary>Level-0 files that read a data block from the file without deciding the lookup.</summary>
    public int Level0Misses;

    /// <summary>Some file below level 0 read a data block from its file.</summary>
    public bool ReadBelowLevel0;

    /// <summary>A file decided the lookup (an entry, or a range tombstone covering the key).</summary>
    public bool Decided;

    /// <summary>No file read from disk yet.</summary>
    public static GetStats None => new() { SeekFileLevel = -1 };

    /// <summary>
    /// The level-0 reads a compaction of level 0 into the base level would have saved: the
    /// <see cref="Level0Misses"/>, less one when the key is in no table and nothing deeper was read
    /// from disk either (after the compaction one search would remain, in the base level).
    /// </summary>
    public readonly int Level0Charge => Level0Misses > 0 && !Decided && !ReadBelowLevel0 ? Level0Misses - 1 : Level0Misses;

    /// <summary>Records the probe of <paramref name="file"/> at <paramref name="level"/>.</summary>
    public void Record(FileMetaData file, int level, bool dataBlockReadFromFile, bool decided)
    {
        if (dataBlockReadFromFile)
        {
            if (SeekFile == null)
            {
                SeekFile = file;
                SeekFileLevel = level;
            }
            if (level > 0)
            {
                ReadBelowLevel0 = true;
            }
            else if (!decided)
            {
                Level0Misses++;
            }
        }
        Decided |= decided;
    }
}
