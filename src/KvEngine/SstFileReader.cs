using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Storage;
using KvEngine.Table;

namespace KvEngine;

/// <summary>
/// Reads one block-based table file on its own, outside any database (RocksDB's SstFileReader,
/// and what sst_dump does): a table KvEngine or RocksDB wrote, in a database directory or written
/// by <see cref="SstFileWriter"/>. <see cref="Open"/> reads the footer, the properties and the
/// index (verifying their checksums); <see cref="NewIterator"/> walks the stored entries,
/// <see cref="GetTableProperties"/> returns the properties block, <see cref="VerifyChecksum"/>
/// reads and checks every block. Reads bypass any block cache.
/// <para>
/// Thread-safe once open: several iterators may run at once. Dispose every iterator before the
/// reader. A file that is not a table, or whose blocks are damaged, raises
/// <see cref="KvCorruptionException"/> naming the file.
/// </para>
/// </summary>
public sealed class SstFileReader : IDisposable
{
    private readonly KvOptions _options;
    private TableReader? _table;
    private bool _disposed;

    /// <summary>Creates a reader; <paramref name="options"/> are accepted for RocksDB's shape (the table's own footer and blocks say how to read it).</summary>
    /// <param name="options">Options of the database the table belongs to; null for defaults.</param>
    public SstFileReader(KvOptions? options = null) => _options = options ?? new KvOptions();

    /// <summary>The path <see cref="Open"/> opened, or null before.</summary>
    public string? FilePath { get; private set; }

    /// <summary>The table's format_version (2..5), from its footer. Requires <see cref="Open"/>.</summary>
    public int FormatVersion => (int)Table.Footer.FormatVersion;

    /// <summary>
    /// The checksum type the table's blocks carry, from its footer: RocksDB's ChecksumType number
    /// (0 none, 1 CRC32C, 2 xxHash, 3 xxHash64, 4 XXH3). Requires <see cref="Open"/>.
    /// </summary>
    public int ChecksumType => (int)Table.Footer.ChecksumType;

    /// <summary>The size of the file in bytes. Requires <see cref="Open"/>.</summary>
    public long FileSize { get; private set; }

    /// <summary>Opens the table at <paramref name="filePath"/>: reads and checks its footer, properties and index.</summary>
    /// <param name="filePath">A table file.</param>
    /// <exception cref="FileNotFoundException">The file does not exist.</exception>
    /// <exception cref="KvCorruptionException">The file is not a block-based table, or its footer, properties or index are damaged.</exception>
    /// <exception cref="InvalidOperationException">The reader is already open.</exception>
    public void Open(string filePath)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        ArgumentException.ThrowIfNullOrEmpty(filePath);
        if (_table != null)
        {
            throw new InvalidOperationException($"The reader already has {FilePath} open.");
        }
        IFileSystem fs = LocalFileSystem.Instance;
        if (!fs.FileExists(filePath))
        {
            throw new FileNotFoundException($"{filePath}: no such file.", filePath);
        }
        long size = fs.GetFileSize(filePath);
        var tableOptions = new TableOptions { PrefixExtractor = _options.PrefixExtractor };
        IRandomAccessFile file = fs.OpenRandomAccess(filePath);
        try
        {
            _table = TableReader.Open(file, size, tableOptions, filePath);
        }
        catch
        {
            file.Dispose();
            throw;
        }
        FilePath = filePath;
        FileSize = size;
    }

    /// <summary>
    /// An iterator over every stored point entry (see <see cref="SstFileIterator"/>), unpositioned.
    /// With <see cref="ReadOptions.VerifyChecksums"/> (the default) each data block's checksum is
    /// checked as it is read.
    /// </summary>
    /// <param name="options">Read options; only <see cref="ReadOptions.VerifyChecksums"/> applies.</param>
    public SstFileIterator NewIterator(ReadOptions? options = null) =>
        new(Table.NewIterator(options?.VerifyChecksums ?? true, fillCache: false));

    /// <summary>The table's properties block.</summary>
    public KvTableProperties GetTableProperties() => new(Table.Properties);

    /// <summary>The table's range deletions, in the order stored (empty when it has none).</summary>
    /// <exception cref="KvCorruptionException">The range-deletion block is damaged.</exception>
    public IReadOnlyList<SstRangeTombstone> GetRangeTombstones()
    {
        var result = new List<SstRangeTombstone>();
        using InternalIterator? it = Table.NewRangeTombstoneIterator();
        if (it == null)
        {
            return result;
        }
        for (it.SeekToFirst(); it.Valid; it.Next())
        {
            ReadOnlySpan<byte> key = it.Key;
            result.Add(new SstRangeTombstone(InternalKeys.UserKey(key).ToArray(), it.Value.ToArray(), InternalKeys.Sequence(key)));
        }
        return result;
    }

    /// <summary>
    /// Reads every block of the table and checks its checksum (RocksDB's SstFileReader::VerifyChecksum):
    /// every data block through the index, and the range-deletion block; the footer, index,
    /// properties and filter were checked by <see cref="Open"/>. Returns normally when the table is intact.
    /// </summary>
    /// <exception cref="KvCorruptionException">A block's checksum does not match, or a block is malformed or truncated.</exception>
    public void VerifyChecksum()
    {
        using (InternalIterator it = Table.NewIterator(verifyChecksums: true, fillCache: false))
        {
            for (it.SeekToFirst(); it.Valid; it.Next())
            {
            }
        }
        GetRangeTombstones();
    }

    /// <summary>Closes the file. Iterators must be disposed first.</summary>
    public void Dispose()
    {
        if (!_disposed)
        {
            _disposed = true;
            _table?.Dispose();
        }
    }

    private TableReader Table
    {
        get
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            return _table ?? throw new InvalidOperationException("Open a file first (SstFileReader.Open).");
        }
    }
}
