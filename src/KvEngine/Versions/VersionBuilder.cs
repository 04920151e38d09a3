using KvEngine.Format;

namespace KvEngine.Versions;

/// <summary>
/// Applies a sequence of <see cref="VersionEdit"/>s to a base <see cref="Version"/> and produces a
/// new one, checking that edits are consistent (no file added twice, deleted files exist, deeper
/// levels do not overlap); the last compact cursor of each level wins. Inconsistency in a MANIFEST is corruption. Not thread-safe.
/// </summary>
internal sealed class VersionBuilder
{
    private readonly Dictionary<ulong, FileMetaData>[] _levels;
    private readonly byte[]?[] _compactCursors = new byte[Version.NumLevels][];

    public VersionBuilder(Version baseVersion)
    {
        _levels = new Dictionary<ulong, FileMetaData>[Version.NumLevels];
        for (int level = 0; level < Version.NumLevels; level++)
        {
            _compactCursors[level] = baseVersion.CompactCursor(level);
            _levels[level] = new Dictionary<ulong, FileMetaData>();
            foreach (FileMetaData f in baseVersion.Files(level))
            {
                _levels[level][f.Number] = f;
            }
        }
    }

    public void Apply(VersionEdit edit)
    {
        foreach ((int level, ulong number) in edit.DeletedFiles)
        {
            CheckLevel(level);
            if (!_levels[level].Remove(number))
            {
                throw new KvCorruptionException($"MANIFEST deletes file {number} from level {level}, where it is not.");
            }
        }
        foreach ((int level, FileMetaData file) in edit.NewFiles)
        {
            CheckLevel(level);
            if (file.Smallest.Length < InternalKeys.TrailerSize || file.Largest.Length < InternalKeys.TrailerSize ||
                InternalKeyComparer.Compare(file.Smallest, file.Largest) > 0)
            {
                throw new KvCorruptionException($"MANIFEST adds file {file.Number} with a malformed key range.");
            }
            for (int l = 0; l < Version.NumLevels; l++)
            {
                if (_levels[l].ContainsKey(file.Number))
                {
                    throw new KvCorruptionException($"MANIFEST adds file {file.Number} twice.");
                }
            }
            _levels[level][file.Number] = file;
        }
        foreach ((int level, byte[] key) in edit.CompactCursors)
        {
            CheckLevel(level);
            if (key.Length < InternalKeys.TrailerSize)
            {
                throw new KvCorruptionException($"MANIFEST sets a malformed compact cursor for level {level}.");
            }
            _compactCursors[level] = key;
        }
    }

    public Version Build(VersionSet? owner)
    {
        var levels = new FileMetaData[Version.NumLevels][];
        for (int level = 0; level < Version.NumLevels; level++)
        {
            var files = new FileMetaData[_levels[level].Count];
            _levels[level].Values.CopyTo(files, 0);
            if (level == 0)
            {
                Array.Sort(files, static (a, b) =>
                {
                    int c = b.LargestSeqno.CompareTo(a.LargestSeqno);
                    return c != 0 ? c : b.Number.CompareTo(a.Number);
                });
            }
            else
            {
                Array.Sort(files, static (a, b) => InternalKeyComparer.Compare(a.Smallest, b.Smallest));
                for (int i = 1; i < files.Length; i++)
                {
                    if (InternalKeyComparer.Compare(files[i - 1].Largest, files[i].Smallest) >= 0)
                    {
                        throw new KvCorruptionException(
                            $"Files {files[i - 1].Number} and {files[i].Number} overlap in level {level}.");
                    }
                }
            }
            levels[level] = files;
        }
        return new Version(owner, levels, (byte[]?[])_compactCursors.Clone());
    }

    private static void CheckLevel(int level)
    {
        if (level < 0)
        {
            throw new KvCorruptionException($"MANIFEST names level {level}.");
        }
        if (level >= Version.NumLevels)
        {
            // A valid RocksDB database opened with num_levels > 7, not damage.
            throw new KvNotSupportedException(
                $"MANIFEST places a file at level {level}; KvEngine supports levels 0..{Version.NumLevels - 1} (RocksDB num_levels up to {Version.NumLevels}).");
        }
    }
}
