using KvEngine.Iterators;
using KvEngine.Table;

namespace KvEngine.Versions;

/// <summary>
/// The files of one sorted level, opened through the table cache for a <see cref="LevelIterator"/>.
/// Immutable; the version that lists the files is pinned by whoever iterates.
/// </summary>
internal sealed class LevelFiles : ITableIteratorFactory
{
    private readonly TableCache _tables;
    private readonly IReadOnlyList<FileMetaData> _files;
    private readonly bool _verifyChecksums;
    private readonly bool _fillCache;
    private readonly KvPrefixExtractor? _prefixSeek;
    private readonly int _readaheadSize;
    private readonly IteratorReads? _reads;

    /// <param name="tables">The family's table cache.</param>
    /// <param name="files">The level's files, in key order.</param>
    /// <param name="verifyChecksums">Verify data block checksums.</param>
    /// <param name="fillCache">Insert the blocks read into the block cache.</param>
    /// <param name="prefixSeek">The family's prefix extractor in prefix-seek mode (no total order seek), else null.</param>
    /// <param name="readaheadSize">Bytes each file's iterator reads ahead from its first block on (a compaction's; see <see cref="Readahead"/>), 0 for the automatic readahead.</param>
    /// <param name="reads">Asynchronous prefetch or a scan's deferred reads for each file's iterator (see <see cref="IteratorReads"/>); null: synchronous.</param>
    public LevelFiles(TableCache tables, IReadOnlyList<FileMetaData> files, bool verifyChecksums, bool fillCache = true, KvPrefixExtractor? prefixSeek = null,
        int readaheadSize = 0, IteratorReads? reads = null)
    {
        _reads = reads;
        _readaheadSize = readaheadSize;
        _tables = tables;
        _files = files;
        _verifyChecksums = verifyChecksums;
        _fillCache = fillCache;
        _prefixSeek = prefixSeek;
    }

    /// <summary>A level iterator over these files.</summary>
    public LevelIterator CreateIterator()
    {
        var smallest = new byte[_files.Count][];
        var largest = new byte[_files.Count][];
        for (int i = 0; i < smallest.Length; i++)
        {
            smallest[i] = _files[i].Smallest;
            largest[i] = _files[i].Largest;
        }
        return new LevelIterator(smallest, largest, this, _prefixSeek);
    }

    /// <summary>The file's whole-key filter (as <see cref="TableIterator.MayContainUserKey"/>); true without one.</summary>
    public bool KeyMayMatch(int fileIndex, ReadOnlySpan<byte> userKey)
    {
        TableReader table = _tables.Get(_files[fileIndex]);
        return !table.HasWholeKeyFilter || table.KeyMayMatch(userKey, _fillCache);
    }

    public InternalIterator Open(int fileIndex) => _tables.Get(_files[fileIndex]).NewIterator(_verifyChecksums, _fillCache, prefixFilter: _prefixSeek != null, _readaheadSize, _reads);
}
