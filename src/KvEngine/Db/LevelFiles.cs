using KvEngine.Iterators;
using KvEngine.Manifest;

namespace KvEngine.Db;

/// <summary>
/// The files of one sorted level, opened through the table cache for a <see cref="LevelIterator"/>.
/// Immutable; the version that lists the files is pinned by whoever iterates.
/// </summary>
internal sealed class LevelFiles : ITableIteratorFactory
{
    private readonly TableCache _tables;
    private readonly IReadOnlyList<FileMetaData> _files;
    private readonly bool _verifyChecksums;

    public LevelFiles(TableCache tables, IReadOnlyList<FileMetaData> files, bool verifyChecksums)
    {
        _tables = tables;
        _files = files;
        _verifyChecksums = verifyChecksums;
    }

    public int Count => _files.Count;

    public byte[] Smallest(int index) => _files[index].Smallest;

    public byte[] Largest(int index) => _files[index].Largest;

    public InternalIterator Open(int fileIndex) => _tables.Get(_files[fileIndex]).NewIterator(_verifyChecksums);
}
