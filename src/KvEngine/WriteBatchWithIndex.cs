using System.Buffers;
using KvEngine.Transactions;
using KvEngine.Util;
using KvEngine.Wal;

namespace KvEngine;

/// <summary>
/// A <see cref="KvEngine.WriteBatch"/> with a sorted index over its own writes (RocksDB's
/// WriteBatchWithIndex): the batch's writes can be read back before they are committed —
/// <see cref="GetFromBatch(ReadOnlySpan{byte}, KvMergeOperator?)"/>, and together with the database
/// (<see cref="GetFromBatchAndDB(KvDb, ReadOptions?, ReadOnlySpan{byte})"/>,
/// <see cref="NewIteratorWithBase(ColumnFamilyHandle, KvIterator, ReadOptions?)"/>: read-your-own-writes). Commit it by
/// writing <see cref="WriteBatch"/> with <see cref="KvDb.Write(KvEngine.WriteBatch, WriteOptions?)"/>.
/// <para>
/// Semantics (RocksDB's): the index holds one entry per write, ordered by (column family, key
/// bytewise, position in the batch). With <c>overwriteKey</c> a Put, Delete or SingleDelete of a
/// key already in the batch replaces the key's newest index entry, so the index keeps one entry
/// per key unless merges follow each other; the batch's encoding keeps every write either way.
/// A Delete or SingleDelete in the batch hides the database's value; merge operands in the batch
/// apply on top of the newest Put or Delete in the batch, or else of the database's value, with
/// the family's <see cref="ColumnFamilyOptions.MergeOperator"/>. DeleteRange is not offered (RocksDB's
/// WriteBatchWithIndex refuses it too: a range cannot be indexed by key).
/// </para>
/// <para>
/// Do not modify <see cref="WriteBatch"/> directly: the index would not see the change. Not
/// thread-safe. Dispose it when done (it holds the batch's pooled buffer).
/// </para>
/// </summary>
public sealed class WriteBatchWithIndex : IDisposable
{
    private readonly BatchIndex _index = new();
    private readonly List<BatchIndexEntry> _scratch = new();
    private readonly ArrayBufferWriter<byte> _mergeResult = new();
    private readonly Stack<(long Size, int Count)> _savePoints = new();
    private readonly WriteBatch _batch;
    private bool _disposed;

    /// <summary>Creates an empty batch.</summary>
    /// <param name="overwriteKey">A later Put or Delete of a key replaces its index entry (RocksDB's overwrite_key).</param>
    public WriteBatchWithIndex(bool overwriteKey = false)
    {
        OverwriteKey = overwriteKey;
        _batch = new WriteBatch();
    }

    /// <summary>Whether a later Put or Delete of a key replaces its index entry.</summary>
    public bool OverwriteKey { get; }

    /// <summary>
    /// The underlying batch, to commit with <see cref="KvDb.Write(KvEngine.WriteBatch, WriteOptions?)"/>
    /// (RocksDB's GetWriteBatch). Read it, do not modify it.
    /// </summary>
    public WriteBatch WriteBatch
    {
        get
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            return _batch;
        }
    }

    /// <summary>Number of writes in the batch (every write, overwritten ones too).</summary>
    public int Count => WriteBatch.Count;

    /// <summary>Entries in the index (fewer than <see cref="Count"/> when keys were overwritten in overwrite mode).</summary>
    internal int IndexedEntries => _index.Count;

    /// <summary>Stores <paramref name="value"/> under <paramref name="key"/>.</summary>
    public void Put(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) => Add(BatchEntryKind.Put, 0, key, value);

    /// <summary>Stores <paramref name="value"/> under <paramref name="key"/> in <paramref name="columnFamily"/>.</summary>
    public void Put(ColumnFamilyHandle columnFamily, ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) =>
        Add(BatchEntryKind.Put, FamilyId(columnFamily), key, value);

    /// <summary>Removes <paramref name="key"/>.</summary>
    public void Delete(ReadOnlySpan<byte> key) => Add(BatchEntryKind.Delete, 0, key, default);

    /// <summary>Removes <paramref name="key"/> from <paramref name="columnFamily"/>.</summary>
    public void Delete(ColumnFamilyHandle columnFamily, ReadOnlySpan<byte> key) =>
        Add(BatchEntryKind.Delete, FamilyId(columnFamily), key, default);

    /// <summary>Removes <paramref name="key"/>, written once (see <see cref="WriteBatch.SingleDelete(ReadOnlySpan{byte})"/>).</summary>
    public void SingleDelete(ReadOnlySpan<byte> key) => Add(BatchEntryKind.SingleDelete, 0, key, default);

    /// <summary>Removes <paramref name="key"/>, written once, from <paramref name="columnFamily"/>.</summary>
    public void SingleDelete(ColumnFamilyHandle columnFamily, ReadOnlySpan<byte> key) =>
        Add(BatchEntryKind.SingleDelete, FamilyId(columnFamily), key, default);

    /// <summary>Adds a merge operand for <paramref name="key"/>.</summary>
    public void Merge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> operand) => Add(BatchEntryKind.Merge, 0, key, operand);

    /// <summary>Adds a merge operand for <paramref name="key"/> in <paramref name="columnFamily"/>.</summary>
    public void Merge(ColumnFamilyHandle columnFamily, ReadOnlySpan<byte> key, ReadOnlySpan<byte> operand) =>
        Add(BatchEntryKind.Merge, FamilyId(columnFamily), key, operand);

    /// <summary>Removes every write and every save point.</summary>
    public void Clear()
    {
        WriteBatch.Clear();
        _index.Clear();
        _savePoints.Clear();
    }

    /// <summary>Records the batch's current state for <see cref="RollbackToSavePoint"/> (RocksDB's SetSavePoint).</summary>
    public void SetSavePoint()
    {
        WriteBatch batch = WriteBatch;
        _savePoints.Push((batch.ApproximateSize, batch.Count));
    }

    /// <summary>Forgets the newest save point without rolling back (RocksDB's PopSavePoint).</summary>
    /// <exception cref="InvalidOperationException">No save point is set.</exception>
    public void PopSavePoint()
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        if (!_savePoints.TryPop(out _))
        {
            throw new InvalidOperationException("No save point is set.");
        }
    }

    /// <summary>
    /// Removes every write made since the newest save point, and that save point (RocksDB's
    /// RollbackToSavePoint); the index is rebuilt from the remaining writes.
    /// </summary>
    /// <exception cref="InvalidOperationException">No save point is set.</exception>
    public void RollbackToSavePoint()
    {
        WriteBatch batch = WriteBatch;
        if (!_savePoints.TryPop(out (long Size, int Count) point))
        {
            throw new InvalidOperationException("No save point is set.");
        }
        byte[] kept = batch.Data.Slice(0, (int)point.Size).ToArray();
        Coding.EncodeFixed32(kept.AsSpan(8), (uint)point.Count);
        batch.Clear();
        _index.Clear();
        var replay = new Replayer(this);
        WriteBatchDecoder.Iterate(kept, ref replay);
    }

    /// <summary>
    /// The value of <paramref name="key"/> in the default family as the batch alone says it (RocksDB's
    /// GetFromBatch): the newest Put (with the merges after it applied), or null when the batch
    /// deletes the key or does not write it.
    /// </summary>
    /// <param name="key">The key.</param>
    /// <param name="mergeOperator">The default family's merge operator, needed when the batch merges into the key.</param>
    /// <exception cref="InvalidOperationException">The batch holds only merge operands for the key (RocksDB's
    /// MergeInProgress: the result depends on the database; use <see cref="GetFromBatchAndDB(KvDb, ReadOptions?, ReadOnlySpan{byte})"/>),
    /// or merges without a merge operator.</exception>
    public byte[]? GetFromBatch(ReadOnlySpan<byte> key, KvMergeOperator? mergeOperator = null) =>
        GetFromBatch(0, "default", mergeOperator, key);

    /// <summary>The value of <paramref name="key"/> in <paramref name="columnFamily"/> as the batch alone says it; see <see cref="GetFromBatch(ReadOnlySpan{byte}, KvMergeOperator?)"/>.</summary>
    /// <exception cref="InvalidOperationException">The batch holds only merge operands for the key.</exception>
    public byte[]? GetFromBatch(ColumnFamilyHandle columnFamily, ReadOnlySpan<byte> key)
    {
        uint id = FamilyId(columnFamily);
        return GetFromBatch(id, columnFamily.Name, columnFamily.Data.Options.MergeOperator, key);
    }

    private byte[]? GetFromBatch(uint cf, string family, KvMergeOperator? mergeOperator, ReadOnlySpan<byte> key)
    {
        ReadOnlySpan<byte> rep = WriteBatch.Data;
        BatchLookupKind kind = Lookup(rep, cf, key, out BatchIndexEntry? baseEntry);
        switch (kind)
        {
            case BatchLookupKind.Put:
                return baseEntry!.Value(rep).ToArray();
            case BatchLookupKind.MergeOnBatchBase:
                return MergeOnto(mergeOperator, family, rep, key, baseEntry!.Kind == BatchEntryKind.Put, baseEntry.Value(rep));
            case BatchLookupKind.MergeOnly:
                throw new InvalidOperationException(
                    "The batch holds only merge operands for the key: its value depends on the database (RocksDB's MergeInProgress); use GetFromBatchAndDB.");
            default:
                return null;
        }
    }

    /// <summary>
    /// The value of <paramref name="key"/> in the default family as committing the batch would leave
    /// it (RocksDB's GetFromBatchAndDB): the batch's newest Put or Delete wins; otherwise the
    /// database's value read with <paramref name="options"/> (its snapshot, if any), with the batch's
    /// merge operands applied on top. Null when the key would be absent.
    /// </summary>
    public byte[]? GetFromBatchAndDB(KvDb db, ReadOptions? options, ReadOnlySpan<byte> key)
    {
        ArgumentNullException.ThrowIfNull(db);
        return GetFromBatchAndDB(db, db.DefaultColumnFamily, options, key);
    }

    /// <summary>The value of <paramref name="key"/> in <paramref name="columnFamily"/> as committing the batch would leave it; see <see cref="GetFromBatchAndDB(KvDb, ReadOptions?, ReadOnlySpan{byte})"/>.</summary>
    public byte[]? GetFromBatchAndDB(KvDb db, ColumnFamilyHandle columnFamily, ReadOptions? options, ReadOnlySpan<byte> key)
    {
        ArgumentNullException.ThrowIfNull(db);
        uint cf = FamilyId(columnFamily);
        ReadOnlySpan<byte> rep = WriteBatch.Data;
        BatchLookupKind kind = Lookup(rep, cf, key, out BatchIndexEntry? baseEntry);
        KvMergeOperator? op = columnFamily.Data.Options.MergeOperator;
        switch (kind)
        {
            case BatchLookupKind.Put:
                return baseEntry!.Value(rep).ToArray();
            case BatchLookupKind.Deleted:
                return null;
            case BatchLookupKind.MergeOnBatchBase:
                return MergeOnto(op, columnFamily.Name, rep, key, baseEntry!.Kind == BatchEntryKind.Put, baseEntry.Value(rep));
            case BatchLookupKind.NotFound:
                return db.Get(columnFamily, key, options);
            default:
                byte[]? dbValue = db.Get(columnFamily, key, options);
                // The database read may not touch the batch; the representation is re-read anyway.
                return MergeOnto(op, columnFamily.Name, WriteBatch.Data, key, dbValue != null, dbValue);
        }
    }

    /// <summary>
    /// An iterator over <paramref name="columnFamily"/> as committing the batch would leave it
    /// (RocksDB's NewIteratorWithBase): <paramref name="baseIterator"/> (from
    /// <see cref="KvDb.NewIterator(ColumnFamilyHandle, ReadOptions?)"/> on the same family, owned by
    /// the result from now on) overlaid with the batch's writes to that family; merge operands use
    /// the family's merge operator.
    /// </summary>
    /// <param name="columnFamily">The family (<see cref="KvDb.DefaultColumnFamily"/> for the default one).</param>
    /// <param name="baseIterator">The database iterator; disposed with the result.</param>
    /// <param name="options">Bounds applied to the batch's keys (<see cref="ReadOptions.IterateLowerBound"/>,
    /// <see cref="ReadOptions.IterateUpperBound"/>); give the base iterator the same options.</param>
    public KvIteratorWithBase NewIteratorWithBase(ColumnFamilyHandle columnFamily, KvIterator baseIterator, ReadOptions? options = null)
    {
        uint id = FamilyId(columnFamily);
        return new(this, id, columnFamily.Name, columnFamily.Data.Options.MergeOperator, baseIterator, options);
    }

    /// <summary>Returns the batch's buffer; the batch must not be used afterwards.</summary>
    public void Dispose()
    {
        if (!_disposed)
        {
            _disposed = true;
            _batch.Dispose();
            _index.Clear();
        }
    }

    internal BatchIndex Index => _index;

    /// <summary>Classifies <paramref name="key"/> of family <paramref name="cf"/>; the operands go to the scratch list.</summary>
    internal BatchLookupKind Lookup(ReadOnlySpan<byte> rep, uint cf, ReadOnlySpan<byte> key, out BatchIndexEntry? baseEntry) =>
        BatchLookup.Resolve(rep, _index.FindGreaterOrEqual(rep, cf, key, int.MinValue), cf, key, _scratch, out baseEntry);

    /// <summary>Merges the scratch list's operands (from the last <see cref="Lookup"/>) onto a base value.</summary>
    internal byte[] MergeOnto(KvMergeOperator? op, string family, ReadOnlySpan<byte> rep, ReadOnlySpan<byte> key, bool hasBase, ReadOnlySpan<byte> baseValue)
    {
        BatchLookup.Merge(op, family, rep, key, hasBase, baseValue, _scratch, _mergeResult);
        return _mergeResult.WrittenSpan.ToArray();
    }

    private static uint FamilyId(ColumnFamilyHandle columnFamily)
    {
        ArgumentNullException.ThrowIfNull(columnFamily);
        return columnFamily.Id;
    }

    private void Add(BatchEntryKind kind, uint cf, ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
    {
        WriteBatch batch = WriteBatch;
        int offset = checked((int)batch.ApproximateSize);
        switch (kind)
        {
            case BatchEntryKind.Put:
                batch.Put(cf, key, value);
                break;
            case BatchEntryKind.Delete:
                batch.Delete(cf, key);
                break;
            case BatchEntryKind.SingleDelete:
                batch.SingleDelete(cf, key);
                break;
            default:
                batch.Merge(cf, key, value);
                break;
        }
        IndexRecord(kind, cf, offset);
    }

    /// <summary>Indexes the record just appended at <paramref name="offset"/>.</summary>
    private void IndexRecord(BatchEntryKind kind, uint cf, int offset)
    {
        ReadOnlySpan<byte> rep = _batch.Data;
        ReadOnlySpan<byte> record = rep.Slice(offset + 1); // past the tag
        if (cf != 0)
        {
            Coding.TryGetVarint32(ref record, out _);
        }
        Coding.TryGetLengthPrefixed(ref record, out ReadOnlySpan<byte> key);
        int keyStart = rep.Length - record.Length - key.Length;
        int valueStart = 0;
        int valueLength = 0;
        if (kind is BatchEntryKind.Put or BatchEntryKind.Merge)
        {
            Coding.TryGetLengthPrefixed(ref record, out ReadOnlySpan<byte> value);
            valueStart = rep.Length - record.Length - value.Length;
            valueLength = value.Length;
        }
        if (OverwriteKey && kind != BatchEntryKind.Merge
            && _index.FindLessThan(rep, cf, key, int.MaxValue) is { } newest
            && newest.ColumnFamily == cf && newest.Key(rep).SequenceEqual(key))
        {
            // The new offset is the largest in the batch: re-pointing the key's newest entry keeps the order.
            newest.Kind = kind;
            newest.Offset = offset;
            newest.KeyStart = keyStart;
            newest.ValueStart = valueStart;
            newest.ValueLength = valueLength;
            return;
        }
        BatchIndexEntry entry = _index.NewEntry();
        entry.ColumnFamily = cf;
        entry.Offset = offset;
        entry.KeyStart = keyStart;
        entry.KeyLength = key.Length;
        entry.ValueStart = valueStart;
        entry.ValueLength = valueLength;
        entry.Kind = kind;
        _index.Insert(entry, rep);
    }

    /// <summary>Re-adds the writes kept by a rollback, indexing them again.</summary>
    private struct Replayer : IWriteBatchHandler
    {
        private readonly WriteBatchWithIndex _owner;
        private uint _cf;

        public Replayer(WriteBatchWithIndex owner)
        {
            _owner = owner;
            _cf = 0;
        }

        public bool SeekColumnFamily(uint columnFamily)
        {
            _cf = columnFamily;
            return true;
        }

        public void Put(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) => _owner.Add(BatchEntryKind.Put, _cf, key, value);

        public void Delete(ReadOnlySpan<byte> key) => _owner.Add(BatchEntryKind.Delete, _cf, key, default);

        public void SingleDelete(ReadOnlySpan<byte> key) => _owner.Add(BatchEntryKind.SingleDelete, _cf, key, default);

        public void DeleteRange(ReadOnlySpan<byte> begin, ReadOnlySpan<byte> end) =>
            throw new InvalidOperationException("A WriteBatchWithIndex holds no range deletion.");

        public void Merge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) => _owner.Add(BatchEntryKind.Merge, _cf, key, value);
    }
}
