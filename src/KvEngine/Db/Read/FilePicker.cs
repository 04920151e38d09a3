using System.Diagnostics.CodeAnalysis;
using KvEngine.Format;
using KvEngine.Table;
using KvEngine.Versions;

using Version = KvEngine.Versions.Version;

namespace KvEngine.Db.Read;

/// <summary>
/// The walk over a version's files for one user key (RocksDB's FilePicker in db/version_set.cc),
/// shared by Get, MultiGet, the merge lookup and KeyMayExist. It hands out, one per
/// <see cref="Next"/>, the files that may hold the key, newest data first: level 0's files whose
/// range holds it, in the version's order (newest first), then on each deeper level the file a
/// binary search on the files' largest keys finds, and the next file of that level as long as the
/// key is the last one of the file before (a user key's entries may span files on a level written
/// by an older engine; KvEngine's compactions never split one).
/// <para>
/// Range tombstones are applied here and only here: before a file's entries are read, the caller
/// passes its reader to <see cref="Cover"/>, which raises <see cref="Covering"/> (the newest visible
/// tombstone sequence covering the key, RocksDB's max_covering_tombstone_seq, seeded with the
/// memtables'). An entry older than it is deleted; once a file covers the key
/// (<see cref="Covered"/>), every older file holds only older entries of it, so the walk is over.
/// The caller reports each probe with <see cref="Record"/>, which builds the lookup's
/// <see cref="GetStats"/>.
/// </para>
/// <para>
/// The walk's whole state (level, index, covering, stats) lives in the struct, so a caller may
/// stop between files (to read a block) and resume. Invariants: the version is pinned by the
/// caller for the picker's life; <c>_index</c> on level 0 is the next file to consider, on deeper
/// levels the next file to return (-1: the level is done). No allocation, no lock; a stack value of
/// one thread.
/// </para>
/// </summary>
internal ref struct FilePicker
{
    private readonly Version _version;
    private readonly ReadOnlySpan<byte> _userKey;
    private readonly ulong _sequence;
    private FileMetaData[] _files; // the current level's files
    private int _level; // the level being walked; Version.NumLevels once the walk is over
    private int _index;
    private FileMetaData? _file; // the file Next returned last
    private int _fileLevel;
    private ulong _covering;
    private GetStats _stats;

    /// <param name="version">The pinned version to walk.</param>
    /// <param name="userKey">The key looked up; must outlive the picker.</param>
    /// <param name="sequence">The read sequence (tombstones newer than it are invisible).</param>
    /// <param name="covering">The covering tombstone sequence the memtables found (0: none).</param>
    public FilePicker(Version version, ReadOnlySpan<byte> userKey, ulong sequence, ulong covering = 0)
    {
        _version = version;
        _userKey = userKey;
        _sequence = sequence;
        _covering = covering;
        _files = version.LevelFiles(0);
        _level = 0;
        _index = 0;
        _fileLevel = -1;
        _stats = GetStats.None;
    }

    /// <summary>The level of the file <see cref="Next"/> returned last; -1 before the first.</summary>
    public readonly int Level => _fileLevel;

    /// <summary>The newest visible range tombstone sequence covering the key so far (0: none).</summary>
    public readonly ulong Covering => _covering;

    /// <summary>A range tombstone covers the key: every file not yet returned holds only deleted entries of it.</summary>
    public readonly bool Covered => _covering > 0;

    /// <summary>The walk's record so far.</summary>
    public readonly GetStats Stats => _stats;

    /// <summary>The next file that may hold the key, newest data first; false when the walk is over.</summary>
    public bool Next([NotNullWhen(true)] out FileMetaData? file)
    {
        while (_level < Version.NumLevels)
        {
            FileMetaData[] files = _files;
            if (_level == 0)
            {
                while (_index < files.Length)
                {
                    FileMetaData f = files[_index++];
                    if (FileBounds.Contains(f, _userKey))
                    {
                        return Return(f, out file);
                    }
                }
            }
            else if (_index >= 0)
            {
                FileMetaData f = files[_index];
                _index = NextInLevel(files, _index, _userKey);
                return Return(f, out file);
            }
            NextLevel();
        }
        file = null;
        return false;
    }

    /// <summary>Raises <see cref="Covering"/> by the range tombstones of <paramref name="reader"/>, the file <see cref="Next"/> returned.</summary>
    public void Cover(TableReader reader)
    {
        if (reader.RangeTombstones is { } tombstones)
        {
            _covering = Math.Max(_covering, tombstones.MaxCoveringSequence(_userKey, _sequence));
        }
    }

    /// <summary>
    /// Records the probe of the file <see cref="Next"/> returned last: whether it read a data block
    /// from the file, and whether it decided the lookup.
    /// </summary>
    public void Record(bool dataBlockReadFromFile, bool decided)
    {
        if (_file != null)
        {
            _stats.Record(_file, _fileLevel, dataBlockReadFromFile, decided);
        }
    }

    /// <summary>
    /// The first file of a sorted level (1+) whose range holds <paramref name="userKey"/>, or -1:
    /// the first file whose largest key is &gt;= it, or the next one when that file ends just before
    /// the key (a range tombstone's exclusive end, the sentinel largest key).
    /// </summary>
    public static int FirstInLevel(FileMetaData[] files, ReadOnlySpan<byte> userKey)
    {
        int i = Version.FindFile(files, userKey);
        if (i < files.Length && FileBounds.IsSentinel(files[i].Largest) &&
            InternalKeys.UserKey(files[i].Largest).SequenceEqual(userKey))
        {
            i++; // the file ends just before the key: the next one may hold it
        }
        return i < files.Length && FileBounds.Contains(files[i], userKey) ? i : -1;
    }

    /// <summary>
    /// After <paramref name="files"/>[<paramref name="index"/>] (a sorted level's file holding
    /// <paramref name="userKey"/>), the next file of the level that may hold older entries of the
    /// key: the following file, when the key is the last of this one and the next begins with it;
    /// else -1.
    /// </summary>
    public static int NextInLevel(FileMetaData[] files, int index, ReadOnlySpan<byte> userKey)
    {
        int next = index + 1;
        return next < files.Length && InternalKeys.UserKey(files[index].Largest).SequenceEqual(userKey) &&
            FileBounds.Contains(files[next], userKey) ? next : -1;
    }

    private bool Return(FileMetaData f, out FileMetaData file)
    {
        _file = f;
        _fileLevel = _level;
        file = f;
        return true;
    }

    // The next non-empty level holding a file for the key, or Version.NumLevels.
    private void NextLevel()
    {
        while (++_level < Version.NumLevels)
        {
            _files = _version.LevelFiles(_level);
            if (_files.Length > 0 && (_index = FirstInLevel(_files, _userKey)) >= 0)
            {
                return;
            }
        }
    }
}
