using System.Buffers;
using System.Runtime.CompilerServices;
using KvEngine.Db;
using KvEngine.Db.Recovery;
using KvEngine.Db.State;
using KvEngine.Iterators;
using KvEngine.Util;
using KvEngine.Versions;

namespace KvEngine;

/// <summary>
/// An open KvEngine database: a persistent, ordered map from byte keys to byte values, stored as an
/// LSM tree in RocksDB's file formats.
/// <para>
/// Column families (RocksDB's): each is a keyspace with its own options, memtables and tables,
/// sharing the WAL, the sequence and snapshots; a <see cref="WriteBatch"/> is atomic across them.
/// Members without a <see cref="ColumnFamilyHandle"/> act on the default family ("default");
/// <see cref="Flush()"/> flushes every family.
/// </para>
/// <para>
/// Thread-safety: every member may be called from any number of threads at once. Writes are
/// atomic per call (a <see cref="WriteBatch"/> applies entirely or not at all) and ordered; reads
/// take no lock. After <see cref="Dispose"/> every call throws <see cref="ObjectDisposedException"/>.
/// </para>
/// <para>
/// Closing: <see cref="Dispose"/> and <see cref="Close"/> may race any other call, from any thread.
/// A call in flight then either finishes or throws <see cref="ObjectDisposedException"/> (a write
/// or flush may also fail with the <see cref="KvException"/> it documents); nothing it uses is
/// freed under it. Close waits for the writes, flushes, compactions and other non-read calls in
/// flight, each of which ends within its current step (a WAL append, a memtable insert, a file
/// copy); reads are not waited for: the memory they read is freed when the last of them is done.
/// <see cref="KvIterator"/>s and <see cref="Snapshot"/>s that outlive the database throw on use
/// and may still (and should) be disposed. A callback of the database (a merge operator,
/// compaction filter, logger) must not dispose it: Close would wait for the call it runs in.
/// </para>
/// </summary>
public sealed partial class KvDb : IDisposable, IAsyncDisposable
{
    [ThreadStatic]
    private static WriteBatch? t_batch;

    [ThreadStatic]
    private static ValueArrayWriter? t_value;

    [ThreadStatic]
    private static MultiGetResults? t_multiGet;

    private readonly DbImpl _impl;

    private KvDb(DbImpl impl)
    {
        _impl = impl;
    }

    /// <summary>The database directory (full path).</summary>
    public string Path => _impl.Directory;

    /// <summary>Sequence number of the last acknowledged write.</summary>
    public ulong LatestSequenceNumber => _impl.Versions.LastSequence;

    /// <summary>Opens (or, with <see cref="KvOptions.CreateIfMissing"/>, creates) the database at <paramref name="path"/>.</summary>
    /// <exception cref="KvCorruptionException">Its files are damaged beyond what the recovery mode tolerates.</exception>
    /// <exception cref="KvLockHeldException">Another instance or process holds its LOCK.</exception>
    /// <exception cref="KvException">It is missing or exists against the options (<see cref="KvStatusCode.InvalidArgument"/>), or an I/O error (<see cref="KvStatusCode.IOError"/>).</exception>
    public static KvDb Open(string path, KvOptions? options = null) => new(DbImpl.Open(path, options ?? new KvOptions()));

    /// <summary>
    /// Opens the database with its column families (RocksDB's DB::Open with descriptors): every
    /// family the database has must be named (<see cref="ListColumnFamilies"/> lists them); a named
    /// family it lacks is created when <see cref="KvOptions.CreateMissingColumnFamilies"/> is set.
    /// The list must name "default" too, as RocksDB requires ("Default column family not
    /// specified"): its descriptor's options are the default family's, overriding the family options
    /// of <paramref name="options"/> (pass <paramref name="options"/> itself to keep them).
    /// Handles: <see cref="GetColumnFamily"/>, <see cref="ColumnFamilies"/>.
    /// </summary>
    /// <exception cref="ArgumentException">"default" or another family is not named, or a family is missing without CreateMissingColumnFamilies, or is named twice.</exception>
    /// <exception cref="KvCorruptionException">Its files are damaged beyond what the recovery mode tolerates.</exception>
    /// <exception cref="KvLockHeldException">Another instance or process holds its LOCK.</exception>
    /// <exception cref="KvException">It is missing or exists against the options (<see cref="KvStatusCode.InvalidArgument"/>), or an I/O error (<see cref="KvStatusCode.IOError"/>).</exception>
    public static KvDb Open(string path, KvOptions options, IEnumerable<ColumnFamilyDescriptor> columnFamilies)
    {
        ArgumentNullException.ThrowIfNull(columnFamilies);
        return new(DbImpl.Open(path, options, columnFamilies));
    }

    /// <summary>
    /// The names of the column families of the database at <paramref name="path"/>, "default"
    /// first, in creation order (RocksDB's DB::ListColumnFamilies). Reads only CURRENT and the
    /// MANIFEST; the database may be open elsewhere.
    /// </summary>
    /// <exception cref="KvException">The database does not exist.</exception>
    /// <exception cref="KvCorruptionException">CURRENT names a missing MANIFEST, or either is damaged.</exception>
    public static IReadOnlyList<string> ListColumnFamilies(string path, KvOptions? options = null)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        Storage.IFileSystem fs = (options ?? new KvOptions()).FileSystem;
        string dir = System.IO.Path.GetFullPath(path);
        if (!fs.FileExists(FileNames.CurrentFile(dir)))
        {
            throw new KvException($"Database '{dir}' does not exist (no CURRENT file).", KvStatusCode.NotFound, KvStatusSubCode.None, null);
        }
        try
        {
            return ManifestReader.ListColumnFamilies(fs, dir);
        }
        catch (IOException e)
        {
            throw new KvException($"Listing the column families of '{path}' failed: {e.Message}", e);
        }
    }

    /// <summary>
    /// Deletes the database at <paramref name="path"/> (RocksDB's DestroyDB): every file of the
    /// database (tables, WALs, MANIFESTs, CURRENT, IDENTITY, OPTIONS and LOG files, LOCK last),
    /// then the directory if nothing else is in it. Files of other names are left alone. Does
    /// nothing when the directory does not exist.
    /// </summary>
    /// <exception cref="KvLockHeldException">The database is open (its LOCK is held).</exception>
    /// <exception cref="KvException">A file could not be deleted.</exception>
    public static void Destroy(string path, KvOptions? options = null) =>
        DbDestroyer.Destroy(path, (options ?? new KvOptions()).FileSystem);

    /// <summary>
    /// Rebuilds the database at <paramref name="path"/> when its MANIFEST or CURRENT is lost or
    /// damaged (RocksDB's RepairDB): every readable table is kept, placed in level 0 of the family
    /// its properties name; tables that cannot be read, and the old MANIFESTs, move to the
    /// <c>lost</c> subdirectory; the WALs are replayed into tables (damaged records skipped); each
    /// family is then compacted. <paramref name="columnFamilies"/> gives the options of named
    /// families (merge operators for merges in the WAL); other families found get
    /// <paramref name="options"/>. See docs/admin.md for what a repair can and cannot restore.
    /// </summary>
    /// <exception cref="KvLockHeldException">The database is open (its LOCK is held).</exception>
    /// <exception cref="KvException">Its directory is missing, or the repair failed.</exception>
    public static void Repair(string path, KvOptions? options = null, IEnumerable<ColumnFamilyDescriptor>? columnFamilies = null) =>
        Repairer.Repair(path, options ?? new KvOptions(), columnFamilies?.ToList() ?? []);

    /// <summary>The default column family ("default", id 0).</summary>
    public ColumnFamilyHandle DefaultColumnFamily => _impl.DefaultFamily.Handle;

    /// <summary>The live column families, default first, in id order.</summary>
    public IReadOnlyList<ColumnFamilyHandle> ColumnFamilies
    {
        get
        {
            _impl.ThrowIfDisposed();
            List<ColumnFamilyData> live = _impl.LiveFamilies();
            return live.ConvertAll(static f => f.Handle);
        }
    }

    /// <summary>The live column family named <paramref name="name"/>, or null.</summary>
    public ColumnFamilyHandle? GetColumnFamily(string name) => _impl.GetColumnFamily(name);

    /// <summary>
    /// Creates a column family with <paramref name="options"/> (defaults when null), recorded
    /// durably before this returns (RocksDB's CreateColumnFamily).
    /// </summary>
    /// <exception cref="ArgumentException">A family of that name exists, or an option is out of range.</exception>
    public ColumnFamilyHandle CreateColumnFamily(string name, ColumnFamilyOptions? options = null) =>
        _impl.CreateColumnFamily(name, options ?? new ColumnFamilyOptions());

    /// <summary>
    /// Drops a column family (RocksDB's DropColumnFamily), durably before this returns: its data is
    /// gone for new reads and writes (which then throw <see cref="ArgumentException"/>); iterators
    /// already open keep reading it, and its files are deleted once they are disposed.
    /// </summary>
    /// <exception cref="ArgumentException">The default family, a family already dropped, or a handle of another database.</exception>
    public void DropColumnFamily(ColumnFamilyHandle columnFamily)
    {
        ArgumentNullException.ThrowIfNull(columnFamily);
        _impl.DropColumnFamily(columnFamily);
    }

    /// <summary>Opens the database on a thread-pool thread (recovery reads and writes files).</summary>
    public static async ValueTask<KvDb> OpenAsync(string path, KvOptions? options = null, CancellationToken cancellationToken = default)
    {
        cancellationToken.ThrowIfCancellationRequested();
        return await Task.Run(() => Open(path, options), cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// Sets <paramref name="key"/> to <paramref name="value"/> (RocksDB's Put), replacing any value it
    /// had; returns when the write is as durable as <paramref name="options"/> asks
    /// (<see cref="WriteOptions.Default"/> when null). Keys and values may be empty.
    /// </summary>
    /// <exception cref="KvWriteStoppedException">A background error stopped writes (<see cref="Resume"/> clears it; <see cref="KvException.SubCode"/> <see cref="KvStatusSubCode.NoSpace"/>: a full disk).</exception>
    /// <exception cref="KvReadOnlyException">The database was opened read-only.</exception>
    public void Put(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, WriteOptions? options = null)
    {
        WriteBatch b = ThreadBatch();
        b.Put(key, value);
        WriteThreadBatch(b, options);
    }

    /// <summary>Sets <paramref name="key"/> to <paramref name="value"/> in <paramref name="columnFamily"/>.</summary>
    /// <exception cref="ArgumentException">The family was dropped or belongs to another database.</exception>
    public void Put(ColumnFamilyHandle columnFamily, ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, WriteOptions? options = null)
    {
        _impl.Resolve(columnFamily);
        WriteBatch b = ThreadBatch();
        b.Put(columnFamily, key, value);
        WriteThreadBatch(b, options);
    }

    /// <summary>Deletes <paramref name="key"/> from <paramref name="columnFamily"/>.</summary>
    /// <exception cref="ArgumentException">The family was dropped or belongs to another database.</exception>
    public void Delete(ColumnFamilyHandle columnFamily, ReadOnlySpan<byte> key, WriteOptions? options = null)
    {
        _impl.Resolve(columnFamily);
        WriteBatch b = ThreadBatch();
        b.Delete(columnFamily, key);
        WriteThreadBatch(b, options);
    }

    /// <summary>Removes every key of <paramref name="columnFamily"/> in [<paramref name="begin"/>, <paramref name="end"/>).</summary>
    /// <exception cref="ArgumentException"><paramref name="begin"/> sorts after <paramref name="end"/>, or the family was dropped.</exception>
    public void DeleteRange(ColumnFamilyHandle columnFamily, ReadOnlySpan<byte> begin, ReadOnlySpan<byte> end, WriteOptions? options = null)
    {
        _impl.Resolve(columnFamily);
        WriteBatch b = ThreadBatch();
        b.DeleteRange(columnFamily, begin, end);
        if (b.Count > 0)
        {
            WriteThreadBatch(b, options);
        }
    }

    /// <summary>
    /// Deletes <paramref name="key"/> (RocksDB's Delete: writes a tombstone, which compaction
    /// drops once no snapshot needs what it hides). Deleting a missing key is not an error.
    /// </summary>
    public void Delete(ReadOnlySpan<byte> key, WriteOptions? options = null)
    {
        WriteBatch b = ThreadBatch();
        b.Delete(key);
        WriteThreadBatch(b, options);
    }

    /// <summary>
    /// Removes <paramref name="key"/>, which must have been written exactly once since it was last
    /// removed (RocksDB's SingleDelete): a flush or compaction drops the deletion together with the
    /// one value it meets, unless a snapshot lies between them, so no tombstone lingers. Reads treat
    /// it as a deletion. Overwriting the key, or mixing SingleDelete with Delete or Merge on it, is
    /// undefined, as in RocksDB: an older value may reappear. See docs/admin.md.
    /// </summary>
    public void SingleDelete(ReadOnlySpan<byte> key, WriteOptions? options = null)
    {
        WriteBatch b = ThreadBatch();
        b.SingleDelete(key);
        WriteThreadBatch(b, options);
    }

    /// <summary>Removes <paramref name="key"/>, written exactly once, from <paramref name="columnFamily"/>; see <see cref="SingleDelete(ReadOnlySpan{byte}, WriteOptions)"/>.</summary>
    /// <exception cref="ArgumentException">The family was dropped or belongs to another database.</exception>
    public void SingleDelete(ColumnFamilyHandle columnFamily, ReadOnlySpan<byte> key, WriteOptions? options = null)
    {
        _impl.Resolve(columnFamily);
        WriteBatch b = ThreadBatch();
        b.SingleDelete(columnFamily, key);
        WriteThreadBatch(b, options);
    }

    /// <summary>
    /// <see cref="SingleDelete(ReadOnlySpan{byte}, WriteOptions)"/>, completing when the write is as durable as
    /// <paramref name="options"/> asks. Cancellation is observed only before the write is queued.
    /// </summary>
    public ValueTask SingleDeleteAsync(ReadOnlyMemory<byte> key, WriteOptions? options = null, CancellationToken cancellationToken = default)
    {
        var b = new WriteBatch(256, spillToNative: true);
        b.SingleDelete(key.Span);
        return WriteOwnedAsync(b, options, cancellationToken);
    }

    /// <summary>
    /// Removes every key in [<paramref name="begin"/>, <paramref name="end"/>) (begin inclusive, end
    /// exclusive, as RocksDB's DeleteRange) with one range tombstone, whatever the number of keys.
    /// begin == end does nothing.
    /// </summary>
    /// <exception cref="ArgumentException"><paramref name="begin"/> sorts after <paramref name="end"/>.</exception>
    public void DeleteRange(ReadOnlySpan<byte> begin, ReadOnlySpan<byte> end, WriteOptions? options = null)
    {
        WriteBatch b = ThreadBatch();
        b.DeleteRange(begin, end);
        if (b.Count > 0)
        {
            WriteThreadBatch(b, options);
        }
        else
        {
            _impl.ThrowIfDisposed();
            _impl.ThrowIfReadOnly("Write");
        }
    }

    /// <summary>
    /// Adds the merge operand <paramref name="operand"/> to <paramref name="key"/> (RocksDB's Merge):
    /// a read returns the key's earlier value combined with its operands by
    /// <see cref="ColumnFamilyOptions.MergeOperator"/>, so updates such as counter increments need no
    /// read. Returns when the write is as durable as <paramref name="options"/> asks.
    /// </summary>
    /// <exception cref="InvalidOperationException">No merge operator is configured.</exception>
    public void Merge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> operand, WriteOptions? options = null)
    {
        ThrowIfNoMergeOperator(_impl.DefaultFamily);
        WriteBatch b = ThreadBatch();
        b.Merge(key, operand);
        WriteThreadBatch(b, options);
    }

    /// <summary>
    /// <see cref="Merge(ReadOnlySpan{byte}, ReadOnlySpan{byte}, WriteOptions)"/>, completing when the write is as durable as <paramref name="options"/> asks.
    /// Cancellation is observed only before the write is queued: once queued it is committed.
    /// </summary>
    /// <exception cref="InvalidOperationException">No merge operator is configured (thrown at once).</exception>
    public ValueTask MergeAsync(ReadOnlyMemory<byte> key, ReadOnlyMemory<byte> operand, WriteOptions? options = null,
        CancellationToken cancellationToken = default)
    {
        ThrowIfNoMergeOperator(_impl.DefaultFamily);
        var b = new WriteBatch(256, spillToNative: true);
        b.Merge(key.Span, operand.Span);
        return WriteOwnedAsync(b, options, cancellationToken);
    }

    /// <summary>Adds the merge operand <paramref name="operand"/> to <paramref name="key"/> in <paramref name="columnFamily"/>; see <see cref="Merge(ReadOnlySpan{byte}, ReadOnlySpan{byte}, WriteOptions)"/>.</summary>
    /// <exception cref="InvalidOperationException">The family has no <see cref="ColumnFamilyOptions.MergeOperator"/>.</exception>
    /// <exception cref="ArgumentException">The family was dropped or belongs to another database.</exception>
    public void Merge(ColumnFamilyHandle columnFamily, ReadOnlySpan<byte> key, ReadOnlySpan<byte> operand, WriteOptions? options = null)
    {
        ThrowIfNoMergeOperator(_impl.Resolve(columnFamily));
        WriteBatch b = ThreadBatch();
        b.Merge(columnFamily, key, operand);
        WriteThreadBatch(b, options);
    }

    private static void ThrowIfNoMergeOperator(ColumnFamilyData cfd)
    {
        if (cfd.Options.MergeOperator is null)
        {
            throw new InvalidOperationException(
                $"Merge needs ColumnFamilyOptions.MergeOperator on column family '{cfd.Name}' (RocksDB: merge_operator is not properly initialized).");
        }
    }

    /// <summary>Applies every record of <paramref name="batch"/> atomically.</summary>
    /// <exception cref="KvWriteStoppedException">A background error stopped writes (<see cref="Resume"/> clears it; <see cref="KvException.SubCode"/> <see cref="KvStatusSubCode.NoSpace"/>: a full disk).</exception>
    /// <exception cref="KvReadOnlyException">The database was opened read-only.</exception>
    public void Write(WriteBatch batch, WriteOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(batch);
        _impl.Write(batch, options ?? WriteOptions.Default);
    }

    /// <summary>
    /// Puts a value; completes when the write is as durable as <paramref name="options"/> asks.
    /// Completes synchronously when no other write is in progress. Cancellation is observed only
    /// before the write is queued: once queued it is committed.
    /// </summary>
    public ValueTask PutAsync(ReadOnlyMemory<byte> key, ReadOnlyMemory<byte> value, WriteOptions? options = null,
        CancellationToken cancellationToken = default)
    {
        var b = new WriteBatch(256, spillToNative: true);
        b.Put(key.Span, value.Span);
        return WriteOwnedAsync(b, options, cancellationToken);
    }

    /// <summary>
    /// Deletes <paramref name="key"/>, as <see cref="Delete(ReadOnlySpan{byte}, WriteOptions)"/>; completes when the write is as
    /// durable as <paramref name="options"/> asks. Cancellation is observed only before the write
    /// is queued: once queued it is committed.
    /// </summary>
    public ValueTask DeleteAsync(ReadOnlyMemory<byte> key, WriteOptions? options = null, CancellationToken cancellationToken = default)
    {
        var b = new WriteBatch(256, spillToNative: true);
        b.Delete(key.Span);
        return WriteOwnedAsync(b, options, cancellationToken);
    }

    /// <summary><see cref="DeleteRange(ReadOnlySpan{byte}, ReadOnlySpan{byte}, WriteOptions)"/>, completing when the write is as durable as <paramref name="options"/> asks.</summary>
    /// <exception cref="ArgumentException"><paramref name="begin"/> sorts after <paramref name="end"/> (thrown at once).</exception>
    public ValueTask DeleteRangeAsync(ReadOnlyMemory<byte> begin, ReadOnlyMemory<byte> end, WriteOptions? options = null,
        CancellationToken cancellationToken = default)
    {
        var b = new WriteBatch(256, spillToNative: true);
        try
        {
            b.DeleteRange(begin.Span, end.Span);
        }
        catch
        {
            b.Dispose();
            throw;
        }
        if (b.Count == 0)
        {
            b.Dispose();
            _impl.ThrowIfDisposed();
            _impl.ThrowIfReadOnly("Write");
            return cancellationToken.IsCancellationRequested ? ValueTask.FromCanceled(cancellationToken) : ValueTask.CompletedTask;
        }
        return WriteOwnedAsync(b, options, cancellationToken);
    }

    /// <summary>Applies <paramref name="batch"/> atomically; do not modify it until the task completes.</summary>
    public ValueTask WriteAsync(WriteBatch batch, WriteOptions? options = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(batch);
        return _impl.WriteAsync(batch, options ?? WriteOptions.Default, cancellationToken);
    }

    /// <summary>
    /// Looks <paramref name="key"/> up; when found, appends its value to <paramref name="value"/>
    /// and returns true. Allocates nothing.
    /// </summary>
    public bool TryGet(ReadOnlySpan<byte> key, IBufferWriter<byte> value, ReadOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(value);
        return _impl.TryGet(_impl.DefaultFamily, key, value, options ?? ReadOptions.Default);
    }

    /// <summary>Looks <paramref name="key"/> up in <paramref name="columnFamily"/>; see <see cref="TryGet(ReadOnlySpan{byte}, IBufferWriter{byte}, ReadOptions?)"/>.</summary>
    /// <exception cref="ArgumentException">The family belongs to another database, or was dropped and its handle disposed (a dropped family's handle keeps serving reads of its last state until then).</exception>
    public bool TryGet(ColumnFamilyHandle columnFamily, ReadOnlySpan<byte> key, IBufferWriter<byte> value, ReadOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(columnFamily);
        ArgumentNullException.ThrowIfNull(value);
        return _impl.TryGet(_impl.ResolveForRead(columnFamily), key, value, options ?? ReadOptions.Default);
    }

    /// <summary>The value of <paramref name="key"/> in <paramref name="columnFamily"/>, or null when absent.</summary>
    /// <exception cref="ArgumentException">The family belongs to another database, or was dropped and its handle disposed (a dropped family's handle keeps serving reads of its last state until then).</exception>
    public byte[]? Get(ColumnFamilyHandle columnFamily, ReadOnlySpan<byte> key, ReadOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(columnFamily);
        return GetArray(_impl.ResolveForRead(columnFamily), key, options);
    }

    /// <summary>The value of <paramref name="key"/>, or null when absent.</summary>
    public byte[]? Get(ReadOnlySpan<byte> key, ReadOptions? options = null)
    {
        return GetArray(_impl.DefaultFamily, key, options);
    }

    /// <summary>Get's byte[]: the value lands in the array returned (a large one without a further copy; see <see cref="ValueArrayWriter"/>).</summary>
    private byte[]? GetArray(ColumnFamilyData family, ReadOnlySpan<byte> key, ReadOptions? options)
    {
        ValueArrayWriter w = t_value ??= new ValueArrayWriter();
        w.Reset();
        if (_impl.TryGet(family, key, w, options ?? ReadOptions.Default))
        {
            return w.ToArrayAndReset();
        }
        w.Reset();
        return null;
    }

    /// <summary>
    /// Looks up every key of <paramref name="keys"/> at one point in time (one read state and one
    /// sequence: <paramref name="options"/>' snapshot, or the latest) as RocksDB's batched MultiGet:
    /// the keys are sorted internally and the ones that fall in one table share its filter, index and
    /// data block reads. Result <c>i</c> in <paramref name="results"/> (reset by the call) belongs to
    /// <c>keys[i]</c>; keys may repeat and come in any order. Allocates nothing once
    /// <paramref name="results"/> has grown to the batch.
    /// </summary>
    /// <exception cref="KvCorruptionException">A block any key's lookup needed is corrupt: the whole batch fails (RocksDB reports it per key).</exception>
    public void MultiGet(ReadOnlySpan<ReadOnlyMemory<byte>> keys, MultiGetResults results, ReadOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(results);
        _impl.MultiGet(_impl.DefaultFamily, keys, results, options ?? ReadOptions.Default);
    }

    /// <summary>Looks up <paramref name="keys"/> in <paramref name="columnFamily"/>; see <see cref="MultiGet(ReadOnlySpan{ReadOnlyMemory{byte}}, MultiGetResults, ReadOptions?)"/>.</summary>
    /// <exception cref="ArgumentException">The family belongs to another database, or was dropped and its handle disposed (a dropped family's handle keeps serving reads of its last state until then).</exception>
    /// <exception cref="KvCorruptionException">A block any key's lookup needed is corrupt.</exception>
    public void MultiGet(ColumnFamilyHandle columnFamily, ReadOnlySpan<ReadOnlyMemory<byte>> keys, MultiGetResults results, ReadOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(columnFamily);
        ArgumentNullException.ThrowIfNull(results);
        _impl.MultiGet(_impl.ResolveForRead(columnFamily), keys, results, options ?? ReadOptions.Default);
    }

    /// <summary>
    /// The values of <paramref name="keys"/> (null for an absent key), in the keys' order, read at
    /// one point in time; see <see cref="MultiGet(ReadOnlySpan{ReadOnlyMemory{byte}}, MultiGetResults, ReadOptions?)"/>
    /// for the allocation-free form.
    /// </summary>
    /// <exception cref="KvCorruptionException">A block any key's lookup needed is corrupt.</exception>
    public byte[]?[] MultiGet(IReadOnlyList<byte[]> keys, ReadOptions? options = null) => MultiGetArrays(_impl.DefaultFamily, keys, options);

    /// <summary>The values of <paramref name="keys"/> in <paramref name="columnFamily"/>; see <see cref="MultiGet(IReadOnlyList{byte[]}, ReadOptions?)"/>.</summary>
    /// <exception cref="ArgumentException">The family belongs to another database, or was dropped and its handle disposed (a dropped family's handle keeps serving reads of its last state until then).</exception>
    /// <exception cref="KvCorruptionException">A block any key's lookup needed is corrupt.</exception>
    public byte[]?[] MultiGet(ColumnFamilyHandle columnFamily, IReadOnlyList<byte[]> keys, ReadOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(columnFamily);
        return MultiGetArrays(_impl.ResolveForRead(columnFamily), keys, options);
    }

    private byte[]?[] MultiGetArrays(Db.State.ColumnFamilyData cfd, IReadOnlyList<byte[]> keys, ReadOptions? options)
    {
        ArgumentNullException.ThrowIfNull(keys);
        var memories = new ReadOnlyMemory<byte>[keys.Count];
        for (int i = 0; i < memories.Length; i++)
        {
            memories[i] = keys[i] ?? throw new ArgumentException($"Key {i} is null.", nameof(keys));
        }
        MultiGetResults results = t_multiGet ??= new MultiGetResults();
        _impl.MultiGet(cfd, memories, results, options ?? ReadOptions.Default);
        var values = new byte[]?[memories.Length];
        for (int i = 0; i < values.Length; i++)
        {
            values[i] = results.ToArray(i);
        }
        return values;
    }

    /// <summary>
    /// RocksDB's KeyMayExist: false only when <paramref name="key"/> certainly does not exist, decided
    /// without I/O from the memtables and the filters already in memory (the table's own, pinned, or in
    /// the block cache); true may be a false positive. When the memtables hold the key's value it is
    /// appended to <paramref name="value"/> (if given) and <paramref name="valueFound"/> is true.
    /// </summary>
    public bool KeyMayExist(ReadOnlySpan<byte> key, IBufferWriter<byte>? value, out bool valueFound, ReadOptions? options = null) =>
        _impl.KeyMayExist(_impl.DefaultFamily, key, value, options ?? ReadOptions.Default, out valueFound);

    /// <summary>KeyMayExist in <paramref name="columnFamily"/>; see <see cref="KeyMayExist(ReadOnlySpan{byte}, IBufferWriter{byte}?, out bool, ReadOptions?)"/>.</summary>
    /// <exception cref="ArgumentException">The family belongs to another database, or was dropped and its handle disposed (a dropped family's handle keeps serving reads of its last state until then).</exception>
    public bool KeyMayExist(ColumnFamilyHandle columnFamily, ReadOnlySpan<byte> key, IBufferWriter<byte>? value, out bool valueFound, ReadOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(columnFamily);
        return _impl.KeyMayExist(_impl.ResolveForRead(columnFamily), key, value, options ?? ReadOptions.Default, out valueFound);
    }

    /// <summary>KeyMayExist without the value; see <see cref="KeyMayExist(ReadOnlySpan{byte}, IBufferWriter{byte}?, out bool, ReadOptions?)"/>.</summary>
    public bool KeyMayExist(ReadOnlySpan<byte> key, ReadOptions? options = null) =>
        _impl.KeyMayExist(_impl.DefaultFamily, key, null, options ?? ReadOptions.Default, out _);

    /// <summary>
    /// The value of <paramref name="key"/>, or null. Table reads are positional reads of the page
    /// cache or disk done inline, so this completes synchronously.
    /// </summary>
    public ValueTask<byte[]?> GetAsync(ReadOnlyMemory<byte> key, ReadOptions? options = null, CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<byte[]?>(cancellationToken);
        }
        try
        {
            return new ValueTask<byte[]?>(Get(key.Span, options));
        }
        catch (Exception e) when (e is KvException or IOException)
        {
            return ValueTask.FromException<byte[]?>(e);
        }
    }

    /// <summary>A snapshot of the current state; dispose it when done.</summary>
    public Snapshot GetSnapshot() => _impl.GetSnapshot();

    /// <summary>A new iterator over the database; dispose it when done.</summary>
    public KvIterator NewIterator(ReadOptions? options = null)
    {
        return _impl.LeaseIterator(_impl.NewIterator(_impl.DefaultFamily, options ?? ReadOptions.Default));
    }

    /// <summary>A new iterator over <paramref name="columnFamily"/>; dispose it when done.</summary>
    /// <exception cref="ArgumentException">The family belongs to another database, or was dropped and its handle disposed (a dropped family's handle keeps serving reads of its last state until then).</exception>
    public KvIterator NewIterator(ColumnFamilyHandle columnFamily, ReadOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(columnFamily);
        return _impl.LeaseIterator(_impl.NewIterator(_impl.ResolveForRead(columnFamily), options ?? ReadOptions.Default));
    }

    /// <summary>
    /// Every key in [<paramref name="from"/>, <paramref name="to"/>) in order, with its value, as of
    /// the moment the scan starts (or the options' snapshot). An empty <paramref name="to"/> means
    /// no upper bound. Keys and values are copied, since they outlive the iterator position.
    /// </summary>
    public async IAsyncEnumerable<KeyValuePair<byte[], byte[]>> ScanAsync(ReadOnlyMemory<byte> from, ReadOnlyMemory<byte> to,
        ReadOptions? options = null, [EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        var ro = new ReadOptions
        {
            Snapshot = options?.Snapshot,
            VerifyChecksums = options?.VerifyChecksums ?? true,
            IterateLowerBound = from.ToArray(),
            IterateUpperBound = to.IsEmpty ? null : to.ToArray(),
            TotalOrderSeek = true, // a range scan: prefix filters must not skip tables (see ReadOptions.TotalOrderSeek)
            PrefixSameAsStart = options?.PrefixSameAsStart ?? false,
        };
        using KvIterator it = NewIterator(ro);
        it.Seek(from.Span);
        int sinceYield = 0;
        while (it.Valid)
        {
            cancellationToken.ThrowIfCancellationRequested();
            var pair = new KeyValuePair<byte[], byte[]>(it.Key.ToArray(), it.Value.ToArray());
            it.Next();
            if (++sinceYield == 1024)
            {
                sinceYield = 0;
                await Task.Yield();
            }
            yield return pair;
        }
    }

    /// <summary>
    /// Writes the memtables of every column family to table files and waits until they are
    /// recorded (RocksDB's Flush over all handles).
    /// </summary>
    /// <exception cref="KvWriteStoppedException">A background error stopped writes (<see cref="Resume"/> clears it; <see cref="KvException.SubCode"/> <see cref="KvStatusSubCode.NoSpace"/>: a full disk).</exception>
    /// <exception cref="KvReadOnlyException">The database was opened read-only.</exception>
    public void Flush()
    {
        _impl.Flush();
    }

    /// <summary>Writes the memtable of <paramref name="columnFamily"/> to a table file and waits until it is recorded.</summary>
    /// <exception cref="ArgumentException">The family was dropped or belongs to another database.</exception>
    public void Flush(ColumnFamilyHandle columnFamily)
    {
        ArgumentNullException.ThrowIfNull(columnFamily);
        _impl.Flush([_impl.Resolve(columnFamily)]);
    }

    /// <summary>
    /// Adds the SST files at <paramref name="paths"/> (written by <see cref="SstFileWriter"/> or
    /// RocksDB's SstFileWriter) to the default column family, as RocksDB's IngestExternalFile: each
    /// file is copied (or, with <see cref="IngestExternalFileOptions.MoveFiles"/>, hard-linked)
    /// into the database and placed in the deepest level where it fits; its entries are newer than
    /// everything written before the call (files overlapping existing data get the next sequence
    /// number), and snapshots taken before it do not see them. Writes wait while the files are
    /// installed; a memtable holding keys in the files' range is flushed first. All or nothing.
    /// </summary>
    /// <exception cref="ArgumentException">No paths, a file with no entries, of another column family, or an unsupported external-file version.</exception>
    /// <exception cref="FileNotFoundException">A file does not exist.</exception>
    /// <exception cref="KvCorruptionException">A file is not an external SST file (no external-file version property), has a key with a non-zero sequence number, or is damaged.</exception>
    /// <exception cref="InvalidOperationException">The options forbid what the ingestion needs (a flush, a global sequence number, a level above the last).</exception>
    /// <exception cref="IOException">Copying, linking or recording the files failed; the database is unchanged.</exception>
    /// <exception cref="KvReadOnlyException">The database was opened read-only.</exception>
    public void IngestExternalFile(IReadOnlyList<string> paths, IngestExternalFileOptions? options = null) =>
        _impl.IngestExternalFile(_impl.DefaultFamily, paths, options ?? new IngestExternalFileOptions());

    /// <summary>
    /// <see cref="IngestExternalFile(IReadOnlyList{string}, IngestExternalFileOptions?)"/> into
    /// <paramref name="columnFamily"/>. A file written for a column family (its
    /// <c>rocksdb.column.family.id</c> property set) must name this family's id.
    /// </summary>
    /// <exception cref="ArgumentException">The family was dropped or belongs to another database, or see the default-family overload.</exception>
    public void IngestExternalFile(ColumnFamilyHandle columnFamily, IReadOnlyList<string> paths, IngestExternalFileOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(columnFamily);
        _impl.IngestExternalFile(_impl.Resolve(columnFamily), paths, options ?? new IngestExternalFileOptions());
    }

    /// <summary>Like <see cref="Flush()"/>, without blocking the calling thread while the tables are written.</summary>
    public ValueTask FlushAsync(CancellationToken cancellationToken = default) => _impl.FlushAsync(null, cancellationToken);

    /// <summary>
    /// Compacts the keys in [<paramref name="begin"/>, <paramref name="end"/>] (null = unbounded):
    /// flushes the memtable, then merges every level holding such keys into the next, down to the
    /// deepest level that holds any, dropping overwritten versions and deletions no snapshot needs.
    /// With a <see cref="ColumnFamilyOptions.CompactionFilter"/> set, that deepest level is then rewritten in
    /// place too, so the filter sees every value of the range.
    /// Runs on the calling thread and returns when done.
    /// </summary>
    /// <exception cref="KvWriteStoppedException">A background error stopped writes (<see cref="Resume"/> clears it; <see cref="KvException.SubCode"/> <see cref="KvStatusSubCode.NoSpace"/>: a full disk).</exception>
    /// <exception cref="KvReadOnlyException">The database was opened read-only.</exception>
    public void CompactRange(byte[]? begin, byte[]? end) => _impl.CompactRange(_impl.DefaultFamily, begin, end);

    /// <summary><see cref="CompactRange(byte[], byte[])"/> for <paramref name="columnFamily"/>.</summary>
    /// <exception cref="ArgumentException">The family was dropped or belongs to another database.</exception>
    public void CompactRange(ColumnFamilyHandle columnFamily, byte[]? begin, byte[]? end)
    {
        ArgumentNullException.ThrowIfNull(columnFamily);
        _impl.CompactRange(_impl.Resolve(columnFamily), begin, end);
    }

    /// <summary><see cref="CompactRange(byte[], byte[])"/> on a thread-pool thread.</summary>
    public ValueTask CompactRangeAsync(byte[]? begin, byte[]? end, CancellationToken cancellationToken = default) =>
        _impl.CompactRangeAsync(_impl.DefaultFamily, begin, end, cancellationToken);

    /// <summary>The engine, for tests and benchmarks that look inside.</summary>
    internal DbImpl Impl => _impl;

    /// <summary>Counters of background work (RocksDB ticker names), for benchmarks and tests.</summary>
    internal Compaction.EngineCounters Counters => _impl.Counters;

    /// <summary>
    /// A statistic by RocksDB's property name (e.g. "rocksdb.num-files-at-level0",
    /// "rocksdb.cur-size-active-mem-table", "rocksdb.levelstats"), or null for an unknown name.
    /// "kvengine.latest-sequence-number" gives the last sequence number; "kvengine.background-error"
    /// the message of the background error that stops writes now (empty when writes are accepted;
    /// "rocksdb.background-errors" counts every error since open, resumed or not).
    /// </summary>
    public string? GetProperty(string name) => _impl.GetProperty(_impl.DefaultFamily, name);

    /// <summary>A statistic of <paramref name="columnFamily"/> by RocksDB's property name; see <see cref="GetProperty(string)"/>.</summary>
    /// <exception cref="ArgumentException">The family was dropped or belongs to another database.</exception>
    public string? GetProperty(ColumnFamilyHandle columnFamily, string name)
    {
        ArgumentNullException.ThrowIfNull(columnFamily);
        return _impl.GetProperty(_impl.Resolve(columnFamily), name);
    }

    /// <summary>
    /// The approximate bytes each of <paramref name="ranges"/> takes (RocksDB's GetApproximateSizes):
    /// with <see cref="SizeApproximationFlags.IncludeFiles"/>, the table bytes of the range, found
    /// through each overlapping table's index (exact to a data block per table end); with
    /// <see cref="SizeApproximationFlags.IncludeMemtables"/>, the key and value bytes of its memtable
    /// entries. An empty range (start == limit) gives 0.
    /// </summary>
    /// <exception cref="ArgumentException">A range's limit sorts before its start, or <paramref name="flags"/> asks for nothing.</exception>
    public long[] GetApproximateSizes(IReadOnlyList<KeyRange> ranges, SizeApproximationFlags flags = SizeApproximationFlags.IncludeFiles) =>
        _impl.GetApproximateSizes(_impl.DefaultFamily, ranges, flags);

    /// <summary><see cref="GetApproximateSizes(IReadOnlyList{KeyRange}, SizeApproximationFlags)"/> for <paramref name="columnFamily"/>.</summary>
    /// <exception cref="ArgumentException">A bad range or flags, or the family was dropped or belongs to another database.</exception>
    public long[] GetApproximateSizes(ColumnFamilyHandle columnFamily, IReadOnlyList<KeyRange> ranges, SizeApproximationFlags flags = SizeApproximationFlags.IncludeFiles)
    {
        ArgumentNullException.ThrowIfNull(columnFamily);
        return _impl.GetApproximateSizes(_impl.Resolve(columnFamily), ranges, flags);
    }

    /// <summary>
    /// The number of memtable entries in <paramref name="range"/> and their key and value bytes
    /// (RocksDB's GetApproximateMemTableStats; here exact, at the cost of walking those entries).
    /// </summary>
    /// <exception cref="ArgumentException">The range's limit sorts before its start.</exception>
    public (long Count, long Size) GetApproximateMemTableStats(KeyRange range)
    {
        _impl.GetApproximateMemTableStats(_impl.DefaultFamily, range, out long count, out long size);
        return (count, size);
    }

    /// <summary><see cref="GetApproximateMemTableStats(KeyRange)"/> for <paramref name="columnFamily"/>.</summary>
    /// <exception cref="ArgumentException">The range's limit sorts before its start, or the family was dropped or belongs to another database.</exception>
    public (long Count, long Size) GetApproximateMemTableStats(ColumnFamilyHandle columnFamily, KeyRange range)
    {
        ArgumentNullException.ThrowIfNull(columnFamily);
        _impl.GetApproximateMemTableStats(_impl.Resolve(columnFamily), range, out long count, out long size);
        return (count, size);
    }

    /// <summary>
    /// Leaves the background-error state without reopening (RocksDB's DB::Resume): after a failed
    /// WAL write, flush or compaction the database refuses writes; this starts a fresh WAL, flushes
    /// every memtable and then accepts writes again. Running out of disk space is resumed
    /// automatically (<see cref="KvOptions.MaxBackgroundErrorResumeCount"/>); other I/O errors wait
    /// for this call. Does nothing when there is no error.
    /// </summary>
    /// <exception cref="KvWriteStoppedException">The error was corruption, which Resume cannot clear.</exception>
    /// <exception cref="KvException">Recovery failed (the cause is inside; the error state stays).</exception>
    public void Resume() => _impl.Resume();

    /// <summary>
    /// Closes the database (RocksDB's DB::Close): writes made with <see cref="WriteOptions.DisableWal"/>
    /// are flushed, background work stops, files and the LOCK are released. Unlike
    /// <see cref="Dispose"/> it reports a failure to persist: <see cref="KvException"/> after
    /// every resource was released anyway. Calling it again, or disposing afterwards, does nothing.
    /// </summary>
    /// <exception cref="KvException">Closing could not persist everything (an I/O error).</exception>
    public void Close() => _impl.Close();

    /// <summary>
    /// Closes the database like <see cref="Close"/> but never throws (.NET's rule for Dispose): a
    /// failure is written to <see cref="System.Diagnostics.Trace"/>. Writes acknowledged through the
    /// WAL are never lost by a failed close; the next open replays them. Safe to call while other
    /// threads use the database (see the class's Closing rule).
    /// </summary>
    public void Dispose() => _impl.Dispose();

    /// <summary>Closes the database like <see cref="Dispose"/>; never throws.</summary>
    public ValueTask DisposeAsync()
    {
        Dispose();
        return ValueTask.CompletedTask;
    }

    private static WriteBatch ThreadBatch()
    {
        WriteBatch b = t_batch ??= new WriteBatch(256, spillToNative: true);
        b.ReleaseLarge(); // normally done after the last write; not if adding to the batch threw
        b.Clear();
        return b;
    }

    /// <summary>
    /// Writes the thread's batch, then frees its encoding if a large write spilled it to native
    /// memory: a thread that once wrote a huge value does not keep a copy of it.
    /// </summary>
    private void WriteThreadBatch(WriteBatch batch, WriteOptions? options)
    {
        try
        {
            _impl.Write(batch, options ?? WriteOptions.Default);
        }
        finally
        {
            batch.ReleaseLarge();
        }
    }

    private async ValueTask WriteOwnedAsync(WriteBatch batch, WriteOptions? options, CancellationToken cancellationToken)
    {
        try
        {
            await _impl.WriteAsync(batch, options ?? WriteOptions.Default, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            batch.Dispose();
        }
    }
}
