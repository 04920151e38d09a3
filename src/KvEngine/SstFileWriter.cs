using System.Security.Cryptography;
using KvEngine.Format;
using KvEngine.Storage;
using KvEngine.Table;
using KvEngine.Util;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine;

/// <summary>
/// Writes a sorted table file outside any database, for ingestion (RocksDB's SstFileWriter):
/// <see cref="Open"/> a path, add entries in strictly increasing key order, then
/// <see cref="Finish"/>. The file is a RocksDB block-based table with every entry at sequence
/// number 0 and the external-file properties (<c>rocksdb.external_sst_file.version</c> = 2,
/// <c>rocksdb.external_sst_file.global_seqno</c> = 0) that RocksDB's ingestion requires, so
/// RocksDB's IngestExternalFile and its tools read it. The writer uses the family's table format,
/// Bloom filter and compression (the bottommost compression when one is set, as RocksDB does,
/// since an ingested file often lands in the last level). After Finish the writer may open
/// another file. Not thread-safe: one thread at a time.
/// </summary>
public sealed class SstFileWriter : IDisposable
{
    /// <summary>RocksDB's kUnknownColumnFamily: the column-family id of a file written without a family handle.</summary>
    internal const uint UnknownColumnFamilyId = 0x7FFFFFFF;

    private readonly TableOptions _tableOptions;
    private readonly IFileSystem _fs;
    private readonly TableBuildContext _context;
    private readonly ByteBuffer _internalKey = new(64);
    private readonly ByteBuffer _lastUserKey = new(64);
    private readonly List<(byte[] Begin, byte[] End)> _rangeDeletions = [];
    private IWritableFile? _file;
    private TableBuilder? _builder;
    private string? _path;
    private byte[]? _smallestKey;
    private bool _disposed;

    /// <summary>
    /// A writer with <paramref name="options"/>' table settings (a <see cref="KvOptions"/> gives
    /// its default family's); null uses the defaults. The settings are copied.
    /// </summary>
    /// <exception cref="ArgumentException">An option is out of range.</exception>
    public SstFileWriter(ColumnFamilyOptions? options = null)
        : this(options ?? new ColumnFamilyOptions(), LocalFileSystem.Instance, UnknownColumnFamilyId, "")
    {
    }

    /// <summary>A writer for a family of a database (its id and name go into the file's properties).</summary>
    internal SstFileWriter(ColumnFamilyOptions options, IFileSystem fileSystem, uint columnFamilyId, string columnFamilyName)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(fileSystem);
        ColumnFamilyOptions family = options.CloneFamily();
        family.ValidateFamily();
        KvCompressionType compression = family.BottommostCompression ?? family.Compression;
        int level = family.BottommostCompression != null ? family.BottommostCompressionLevel ?? family.CompressionLevel : family.CompressionLevel;
        _tableOptions = TableOptions.ForFamily(family, compression, level);
        _tableOptions.Validate();
        _fs = fileSystem;
        _context = new TableBuildContext
        {
            ColumnFamilyId = columnFamilyId,
            ColumnFamilyName = columnFamilyName,
            OriginalFileNumber = 1, // RocksDB's SstFileWriter numbers its file 1
            DbId = "SST Writer",
            DbSessionId = NewSessionId(),
            DbHostId = Environment.MachineName,
            OmitFileCreationTime = true,
            UserProperties = ExternalSstFile.WriterProperties(),
        };
    }

    /// <summary>The size of the file written so far (RocksDB's FileSize()); 0 when no file is open.</summary>
    public long FileSize => _builder?.FileSize ?? 0;

    /// <summary>Creates (or truncates) the file at <paramref name="path"/> and starts a table in it.</summary>
    /// <exception cref="InvalidOperationException">A file is already open (call <see cref="Finish"/> first).</exception>
    /// <exception cref="IOException">The file cannot be created.</exception>
    public void Open(string path)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        ArgumentException.ThrowIfNullOrEmpty(path);
        if (_builder != null)
        {
            throw new InvalidOperationException($"A file is already open ({_path}); call Finish first.");
        }
        IWritableFile file = _fs.CreateWritable(path);
        try
        {
            _builder = new TableBuilder(_tableOptions, file, _context);
        }
        catch
        {
            file.Dispose();
            throw;
        }
        _file = file;
        _path = path;
        _lastUserKey.Clear();
        _smallestKey = null;
        _rangeDeletions.Clear();
    }

    /// <summary>Adds <paramref name="key"/> with <paramref name="value"/>.</summary>
    /// <exception cref="ArgumentException"><paramref name="key"/> is not after the previous key.</exception>
    /// <exception cref="InvalidOperationException">No file is open.</exception>
    public void Put(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) => Add(key, value, ValueType.Value);

    /// <summary>Adds a deletion of <paramref name="key"/> (it hides older values once ingested).</summary>
    /// <exception cref="ArgumentException"><paramref name="key"/> is not after the previous key.</exception>
    /// <exception cref="InvalidOperationException">No file is open.</exception>
    public void Delete(ReadOnlySpan<byte> key) => Add(key, default, ValueType.Deletion);

    /// <summary>
    /// Adds a merge operand for <paramref name="key"/> (RocksDB's SstFileWriter::Merge): once
    /// ingested it is merged, by the family's <see cref="ColumnFamilyOptions.MergeOperator"/>,
    /// with the values older than the file.
    /// </summary>
    /// <exception cref="ArgumentException"><paramref name="key"/> is not after the previous key.</exception>
    /// <exception cref="InvalidOperationException">No file is open.</exception>
    public void Merge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) => Add(key, value, ValueType.Merge);

    /// <summary>
    /// Adds a deletion of every key in [<paramref name="beginKey"/>, <paramref name="endKey"/>).
    /// Range deletions need not follow key order and may overlap the file's other entries; an
    /// empty range (equal keys) deletes nothing and is not written.
    /// </summary>
    /// <exception cref="ArgumentException"><paramref name="endKey"/> is before <paramref name="beginKey"/>.</exception>
    /// <exception cref="InvalidOperationException">No file is open.</exception>
    public void DeleteRange(ReadOnlySpan<byte> beginKey, ReadOnlySpan<byte> endKey)
    {
        EnsureOpen();
        int order = beginKey.SequenceCompareTo(endKey);
        if (order > 0)
        {
            throw new ArgumentException("The end of a range deletion comes before its beginning.", nameof(endKey));
        }
        if (order < 0)
        {
            _rangeDeletions.Add((beginKey.ToArray(), endKey.ToArray()));
        }
    }

    /// <summary>
    /// Completes the file (index, filter, properties, footer), syncs and closes it, and describes it.
    /// </summary>
    /// <exception cref="InvalidOperationException">No file is open, or nothing was added (RocksDB refuses an empty file).</exception>
    /// <exception cref="IOException">Writing failed; the partial file is deleted.</exception>
    public ExternalSstFileInfo Finish()
    {
        EnsureOpen();
        TableBuilder builder = _builder!;
        if (builder.NumEntries == 0 && _rangeDeletions.Count == 0)
        {
            throw new InvalidOperationException("Cannot create an SST file with no entries.");
        }
        string path = _path!;
        try
        {
            byte[] smallestRangeDel = [];
            byte[] largestRangeDel = [];
            if (_rangeDeletions.Count > 0)
            {
                AddRangeDeletions(builder, out smallestRangeDel, out largestRangeDel);
            }
            builder.Finish();
            _file!.Sync();
            long size = builder.FileSize;
            _file.Dispose();
            _file = null;
            _builder = null;
            return new ExternalSstFileInfo(path, _smallestKey ?? [], builder.NumEntries > 0 ? _lastUserKey.WrittenSpan.ToArray() : [],
                smallestRangeDel, largestRangeDel, builder.NumEntries, _rangeDeletions.Count, size);
        }
        catch
        {
            Abandon();
            throw;
        }
    }

    /// <summary>Abandons a file that was opened but not finished (and deletes it).</summary>
    public void Dispose()
    {
        if (_disposed)
        {
            return;
        }
        _disposed = true;
        if (_builder != null)
        {
            Abandon();
        }
        _internalKey.Dispose();
        _lastUserKey.Dispose();
    }

    private void Add(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, ValueType type)
    {
        EnsureOpen();
        TableBuilder builder = _builder!;
        if (builder.NumEntries > 0 && key.SequenceCompareTo(_lastUserKey.WrittenSpan) <= 0)
        {
            throw new ArgumentException("Keys must be added in strict ascending order.", nameof(key));
        }
        _internalKey.Clear();
        _internalKey.Append(key);
        _internalKey.AppendFixed64(((ulong)0 << 8) | (byte)type);
        builder.Add(_internalKey.WrittenSpan, value);
        _smallestKey ??= key.ToArray();
        _lastUserKey.Clear();
        _lastUserKey.Append(key);
    }

    /// <summary>
    /// Writes the range deletions sorted by begin key (the table's range-deletion block is sorted;
    /// two with one begin key, both at sequence 0, become the longer one: the same keys deleted).
    /// </summary>
    private void AddRangeDeletions(TableBuilder builder, out byte[] smallest, out byte[] largest)
    {
        List<(byte[] Begin, byte[] End)> sorted = [.. _rangeDeletions];
        sorted.Sort(static (a, b) =>
        {
            int c = a.Begin.AsSpan().SequenceCompareTo(b.Begin);
            return c != 0 ? c : b.End.AsSpan().SequenceCompareTo(a.End);
        });
        smallest = sorted[0].Begin;
        largest = sorted[0].End;
        byte[]? previousBegin = null;
        foreach ((byte[] begin, byte[] end) in sorted)
        {
            if (end.AsSpan().SequenceCompareTo(largest) > 0)
            {
                largest = end;
            }
            if (previousBegin != null && begin.AsSpan().SequenceEqual(previousBegin))
            {
                continue; // a shorter range from the same begin key, already covered
            }
            previousBegin = begin;
            builder.AddRangeTombstone(InternalKeys.Create(begin, 0, ValueType.RangeDeletion), end);
        }
    }

    private void EnsureOpen()
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        if (_builder == null)
        {
            throw new InvalidOperationException("No file is open: call Open first (a finished file cannot take more entries).");
        }
    }

    private void Abandon()
    {
        string? path = _path;
        _builder?.Abandon();
        _builder = null;
        try
        {
            _file?.Dispose();
        }
        catch (IOException)
        {
            // The file is being discarded.
        }
        _file = null;
        if (path != null)
        {
            try
            {
                _fs.DeleteFile(path);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                // Nothing more can be done with a partial file that cannot be deleted.
            }
        }
    }

    /// <summary>A session id as RocksDB's GenerateDbSessionId makes them: 20 base-36 digits from 128 random bits.</summary>
    private static string NewSessionId()
    {
        const string Digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
        Span<byte> random = stackalloc byte[16];
        RandomNumberGenerator.Fill(random);
        var value = new UInt128(BitConverter.ToUInt64(random[..8]), BitConverter.ToUInt64(random[8..]));
        Span<char> id = stackalloc char[20];
        for (int i = id.Length - 1; i >= 0; i--)
        {
            id[i] = Digits[(int)(value % 36)];
            value /= 36;
        }
        return new string(id);
    }
}
