using KvEngine.Format;
using KvEngine.Versions;

using Version = KvEngine.Versions.Version;

namespace KvEngine.Compaction;

/// <summary>
/// Answers "may a level below the output level hold this user key?" for keys asked in ascending
/// order, by file ranges only (RocksDB's KeyNotExistsBeyondOutputLevel): one cursor per deeper
/// level that only moves forward, so a whole compaction costs O(files). An output in level 0 (FIFO's
/// intra-level-0 compaction) is never the bottom: older level-0 files may hold the key. Not
/// thread-safe.
/// </summary>
internal sealed class DeeperLevelsProbe
{
    private readonly IReadOnlyList<FileMetaData>[] _levels;
    private readonly int[] _cursor;
    private readonly bool _outputLevel0;

    public DeeperLevelsProbe(Version v, int outputLevel)
    {
        _outputLevel0 = outputLevel == 0;
        int first = outputLevel + 1;
        int count = Math.Max(0, Version.NumLevels - first);
        _levels = new IReadOnlyList<FileMetaData>[count];
        for (int i = 0; i < count; i++)
        {
            _levels[i] = v.Files(first + i);
        }
        _cursor = new int[count];
    }

    public bool KeyNotExistsBeyondOutputLevel(ReadOnlySpan<byte> userKey)
    {
        if (_outputLevel0)
        {
            return false;
        }
        for (int l = 0; l < _levels.Length; l++)
        {
            IReadOnlyList<FileMetaData> files = _levels[l];
            ref int i = ref _cursor[l];
            while (i < files.Count && InternalKeys.UserKey(files[i].Largest).SequenceCompareTo(userKey) < 0)
            {
                i++;
            }
            if (i < files.Count && InternalKeys.UserKey(files[i].Smallest).SequenceCompareTo(userKey) <= 0)
            {
                return false;
            }
        }
        return true;
    }

    /// <summary>True when no deeper level has a file overlapping [smallest, largest] (never for level 0).</summary>
    public static bool IsBottommost(Version v, int outputLevel, ReadOnlySpan<byte> smallest, ReadOnlySpan<byte> largest)
    {
        if (outputLevel == 0)
        {
            return false;
        }
        for (int level = outputLevel + 1; level < Version.NumLevels; level++)
        {
            if (v.OverlapInLevel(level, smallest, largest))
            {
                return false;
            }
        }
        return true;
    }
}
