using KvEngine.Util;
using KvEngine.Wal;

namespace KvEngine;

// WriteBatch := sequence: fixed64  count: fixed32  record*
// record     := Value: 0x1 key: varstring value: varstring
//             | Deletion: 0x0 key: varstring
//             | SingleDeletion: 0x7 key: varstring
//             | RangeDeletion: 0xF begin: varstring end: varstring
//             | Merge: 0x2 key: varstring operand: varstring
//             | the column-family variants of the above (Value 0x5, Deletion 0x4, SingleDeletion 0x8,
//               RangeDeletion 0xE, Merge 0x6) with cf: varint32 after the tag, for a family other
//               than the default (0)
//             | (read only) LogData 0x3, Noop 0xD and the other WriteBatchTag values
// varstring  := length: varint32  bytes: uint8[length]
//
// count is the number of Value, Deletion, SingleDeletion, RangeDeletion and Merge records; each
// takes one sequence number, the first one `sequence`. This is RocksDB's WriteBatch rep
// (db/write_batch.cc): it is the payload of a WAL record as is. See docs/formats/write_batch.md.

/// <summary>
/// A group of writes applied atomically: all of them or none survive a crash, across column
/// families too. Build one with <see cref="Put(ReadOnlySpan{byte}, ReadOnlySpan{byte})"/>,
/// <see cref="Delete(ReadOnlySpan{byte})"/> and <see cref="DeleteRange(ReadOnlySpan{byte}, ReadOnlySpan{byte})"/>
/// (or their overloads taking a <see cref="ColumnFamilyHandle"/>), then hand it to the database's write method.
/// Keys and values are copied in; the batch can be reused after <see cref="Clear"/>.
/// Holds a pooled buffer: dispose it when done. Not thread-safe.
/// </summary>
public sealed class WriteBatch : IDisposable
{
    private const int HeaderSize = WriteBatchDecoder.HeaderSize;

    /// <summary>
    /// The largest key plus value (or begin plus end of a range) one write may carry: 1 GiB.
    /// RocksDB allows up to 4 GiB - 1 for each; .NET spans and arrays end at 2 GiB, and a table
    /// block must hold the entry with the rest of its block and its compressed copy, so KvEngine
    /// refuses anything larger when it is added (<see cref="ArgumentException"/>), never after the
    /// write was acknowledged. Every write this accepts flushes, compacts and reads back.
    /// </summary>
    public const int MaxEntrySize = 1 << 30;

    /// <summary>Default largest representation a batch may grow to (one array).</summary>
    internal static readonly long DefaultMaxRepresentationSize = Array.MaxLength;

    private readonly long _maxRepresentationSize;
    private ByteBuffer? _rep;
    private List<uint>? _otherFamilies;
    private List<uint>? _mergeFamilies;

    /// <summary>Creates an empty batch.</summary>
    public WriteBatch()
        : this(256)
    {
    }

    /// <param name="initialCapacity">Bytes to reserve up front.</param>
    /// <param name="maxRepresentationSize">Largest encoding the batch may reach (default ~2 GiB).</param>
    /// <param name="spillToNative">
    /// An engine-owned batch that is always disposed, or released (<see cref="ReleaseLarge"/>) after each write: past 64 KiB
    /// its encoding moves to native memory, which is unmapped at once when released, instead of a
    /// large-object array (a 1 GiB value's copy would stay resident until a full collection, and a
    /// reused batch would keep it for good).
    /// </param>
    internal WriteBatch(int initialCapacity, long maxRepresentationSize = 0, bool spillToNative = false)
    {
        _maxRepresentationSize = maxRepresentationSize > 0
            ? Math.Min(maxRepresentationSize, DefaultMaxRepresentationSize)
            : DefaultMaxRepresentationSize;
        _rep = new ByteBuffer(Math.Max(initialCapacity, HeaderSize), spillToNative);
        _rep.GetSpan(HeaderSize).Slice(0, HeaderSize).Clear();
        _rep.Advance(HeaderSize);
    }

    /// <summary>Number of writes in the batch.</summary>
    public int Count => (int)Coding.DecodeFixed32(Rep.WrittenSpan.Slice(8));

    /// <summary>Size in bytes of the batch's encoding (what it adds to the WAL, before framing).</summary>
    public long ApproximateSize => Rep.Length;

    /// <summary>The sequence number of the first write (set by the engine when it commits the batch).</summary>
    internal ulong Sequence
    {
        get => Coding.DecodeFixed64(Rep.WrittenSpan);
        set => Coding.EncodeFixed64(Rep.WrittenSpanMutable, value);
    }

    /// <summary>
    /// The batch's encoding, RocksDB's WriteBatch representation (<c>WriteBatch::Data()</c>, see
    /// docs/formats/write_batch.md): what goes into the WAL. Send it elsewhere (a replication log,
    /// another process) and rebuild the batch with <see cref="FromData"/>. The span is valid until
    /// the batch changes or is disposed.
    /// </summary>
    public ReadOnlySpan<byte> Data => Rep.WrittenSpan;

    /// <summary>
    /// Rebuilds a batch from an encoding produced by <see cref="Data"/> (or by RocksDB's
    /// <c>WriteBatch::Data()</c>): RocksDB's <c>WriteBatch(const std::string&amp; rep)</c>. The bytes
    /// are validated and copied; the sequence number in them is ignored when the batch is written.
    /// </summary>
    /// <param name="data">A WriteBatch representation.</param>
    /// <returns>A new batch holding the same writes; dispose it when done.</returns>
    /// <exception cref="KvCorruptionException"><paramref name="data"/> is not a well-formed batch.</exception>
    /// <exception cref="KvException">A well-formed batch that KvEngine cannot apply (e.g. a record type it does not support).</exception>
    public static WriteBatch FromData(ReadOnlySpan<byte> data) => FromRep(data);

    /// <summary>The families other than the default that the batch writes, each once; null when none.</summary>
    internal IReadOnlyList<uint>? OtherColumnFamilies => _otherFamilies is { Count: > 0 } ? _otherFamilies : null;

    /// <summary>The batch holds a write to the default family.</summary>
    internal bool WritesDefaultColumnFamily { get; private set; }

    private ByteBuffer Rep
    {
        get
        {
            ObjectDisposedException.ThrowIf(_rep is null, this);
            return _rep;
        }
    }

    /// <summary>Stores <paramref name="value"/> under <paramref name="key"/>.</summary>
    /// <exception cref="ArgumentException">
    /// Key and value together exceed <see cref="MaxEntrySize"/>, or the batch would exceed about 2 GiB.
    /// </exception>
    public void Put(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) =>
        AddRecord(WriteBatchTag.Value, 0, key, value, hasSecond: true);

    /// <summary>Stores <paramref name="value"/> under <paramref name="key"/> in <paramref name="columnFamily"/>.</summary>
    /// <exception cref="ArgumentException">
    /// Key and value together exceed <see cref="MaxEntrySize"/>, or the batch would exceed about 2 GiB.
    /// </exception>
    public void Put(ColumnFamilyHandle columnFamily, ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) =>
        AddRecord(WriteBatchTag.Value, FamilyId(columnFamily), key, value, hasSecond: true);

    /// <summary>Removes <paramref name="key"/> (a no-op if it is absent).</summary>
    public void Delete(ReadOnlySpan<byte> key) =>
        AddRecord(WriteBatchTag.Deletion, 0, key, default, hasSecond: false);

    /// <summary>Removes <paramref name="key"/> from <paramref name="columnFamily"/> (a no-op if it is absent).</summary>
    public void Delete(ColumnFamilyHandle columnFamily, ReadOnlySpan<byte> key) =>
        AddRecord(WriteBatchTag.Deletion, FamilyId(columnFamily), key, default, hasSecond: false);

    /// <summary>
    /// Removes <paramref name="key"/>, which must have been written exactly once since it was last
    /// removed (RocksDB's SingleDelete): a flush or compaction drops the single deletion together
    /// with the one value it meets (when no snapshot lies between them), so no tombstone lingers.
    /// Reads treat it as a deletion. Overwriting the key, or mixing SingleDelete with
    /// <see cref="Delete(ReadOnlySpan{byte})"/> or <see cref="Merge(ReadOnlySpan{byte}, ReadOnlySpan{byte})"/>
    /// on it, is undefined, as in RocksDB: an older value may reappear.
    /// </summary>
    public void SingleDelete(ReadOnlySpan<byte> key) =>
        AddRecord(WriteBatchTag.SingleDeletion, 0, key, default, hasSecond: false);

    /// <summary>
    /// Removes <paramref name="key"/>, written exactly once, from <paramref name="columnFamily"/>;
    /// see <see cref="SingleDelete(ReadOnlySpan{byte})"/>.
    /// </summary>
    public void SingleDelete(ColumnFamilyHandle columnFamily, ReadOnlySpan<byte> key) =>
        AddRecord(WriteBatchTag.SingleDeletion, FamilyId(columnFamily), key, default, hasSecond: false);

    /// <summary>
    /// Removes every key in [<paramref name="begin"/>, <paramref name="end"/>) (begin inclusive,
    /// end exclusive, as RocksDB's DeleteRange), as of this write: keys written later are not affected.
    /// An empty range (begin == end) adds nothing.
    /// </summary>
    /// <exception cref="ArgumentException"><paramref name="begin"/> sorts after <paramref name="end"/>,
    /// or the batch would exceed about 2 GiB.</exception>
    public void DeleteRange(ReadOnlySpan<byte> begin, ReadOnlySpan<byte> end) => DeleteRange(0, begin, end);

    /// <summary>
    /// Removes every key of <paramref name="columnFamily"/> in [<paramref name="begin"/>,
    /// <paramref name="end"/>), as of this write; see <see cref="DeleteRange(ReadOnlySpan{byte}, ReadOnlySpan{byte})"/>.
    /// </summary>
    /// <exception cref="ArgumentException"><paramref name="begin"/> sorts after <paramref name="end"/>,
    /// or the batch would exceed about 2 GiB.</exception>
    public void DeleteRange(ColumnFamilyHandle columnFamily, ReadOnlySpan<byte> begin, ReadOnlySpan<byte> end) =>
        DeleteRange(FamilyId(columnFamily), begin, end);

    private void DeleteRange(uint columnFamily, ReadOnlySpan<byte> begin, ReadOnlySpan<byte> end)
    {
        int c = begin.SequenceCompareTo(end);
        if (c > 0)
        {
            throw new ArgumentException("DeleteRange: the end key sorts before the begin key.", nameof(end));
        }
        if (c < 0)
        {
            AddRecord(WriteBatchTag.RangeDeletion, columnFamily, begin, end, hasSecond: true);
        }
    }

    private static uint FamilyId(ColumnFamilyHandle columnFamily)
    {
        ArgumentNullException.ThrowIfNull(columnFamily);
        return columnFamily.Id;
    }

    /// <summary>
    /// Adds a merge operand for <paramref name="key"/> (RocksDB's Merge): reads combine it with the
    /// key's earlier value and operands through <see cref="ColumnFamilyOptions.MergeOperator"/>.
    /// </summary>
    /// <exception cref="ArgumentException">
    /// Key and operand together exceed <see cref="MaxEntrySize"/>, or the batch would exceed about 2 GiB.
    /// </exception>
    public void Merge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> operand)
    {
        AddRecord(WriteBatchTag.Merge, 0, key, operand, hasSecond: true);
        NoteMerge(0);
    }

    /// <summary>Adds a merge operand for <paramref name="key"/> in <paramref name="columnFamily"/>; see <see cref="Merge(ReadOnlySpan{byte}, ReadOnlySpan{byte})"/>.</summary>
    /// <exception cref="ArgumentException">
    /// Key and operand together exceed <see cref="MaxEntrySize"/>, or the batch would exceed about 2 GiB.
    /// </exception>
    public void Merge(ColumnFamilyHandle columnFamily, ReadOnlySpan<byte> key, ReadOnlySpan<byte> operand)
    {
        uint id = FamilyId(columnFamily);
        AddRecord(WriteBatchTag.Merge, id, key, operand, hasSecond: true);
        NoteMerge(id);
    }

    /// <summary>A Put into the family with id <paramref name="columnFamily"/> (a <see cref="WriteBatchWithIndex"/> replaying its records).</summary>
    internal void Put(uint columnFamily, ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) =>
        AddRecord(WriteBatchTag.Value, columnFamily, key, value, hasSecond: true);

    /// <summary>A Delete in the family with id <paramref name="columnFamily"/>.</summary>
    internal void Delete(uint columnFamily, ReadOnlySpan<byte> key) =>
        AddRecord(WriteBatchTag.Deletion, columnFamily, key, default, hasSecond: false);

    /// <summary>A SingleDelete in the family with id <paramref name="columnFamily"/>.</summary>
    internal void SingleDelete(uint columnFamily, ReadOnlySpan<byte> key) =>
        AddRecord(WriteBatchTag.SingleDeletion, columnFamily, key, default, hasSecond: false);

    /// <summary>A Merge into the family with id <paramref name="columnFamily"/>.</summary>
    internal void Merge(uint columnFamily, ReadOnlySpan<byte> key, ReadOnlySpan<byte> operand)
    {
        AddRecord(WriteBatchTag.Merge, columnFamily, key, operand, hasSecond: true);
        NoteMerge(columnFamily);
    }

    /// <summary>The families the batch's merge records write, each once; null when none.</summary>
    internal IReadOnlyList<uint>? MergeColumnFamilies => _mergeFamilies is { Count: > 0 } ? _mergeFamilies : null;

    private void NoteMerge(uint columnFamily)
    {
        HasMerge = true;
        if (!(_mergeFamilies ??= new List<uint>(1)).Contains(columnFamily))
        {
            _mergeFamilies.Add(columnFamily);
        }
    }

    /// <summary>
    /// True when a merge record was added (by <see cref="Merge(ReadOnlySpan{byte}, ReadOnlySpan{byte})"/>
    /// or <see cref="Append"/>) since the batch was created or cleared (RocksDB's HAS_MERGE content
    /// flag). A <see cref="FromRep"/> copy does not scan its records for it.
    /// </summary>
    internal bool HasMerge { get; private set; }

    /// <summary>Removes every write; the batch is empty and reusable.</summary>
    public void Clear()
    {
        ByteBuffer rep = Rep;
        rep.Truncate(HeaderSize);
        rep.WrittenSpanMutable.Clear();
        _otherFamilies?.Clear();
        WritesDefaultColumnFamily = false;
        HasMerge = false;
        _mergeFamilies?.Clear();
    }

    /// <summary>
    /// When the encoding has spilled to native memory (a batch made with spillToNative that grew
    /// past 64 KiB), frees that memory now and leaves the batch empty; otherwise does nothing. For
    /// a batch the engine reuses, so that one huge write does not stay resident until the next.
    /// </summary>
    internal void ReleaseLarge()
    {
        ByteBuffer rep = Rep;
        if (rep.IsNative)
        {
            rep.ReleaseLarge();
            rep.GetSpan(HeaderSize)[..HeaderSize].Clear();
            rep.Advance(HeaderSize);
            Clear();
        }
    }

    /// <summary>
    /// Copies a representation read from a WAL into a new batch, validating it first.
    /// </summary>
    /// <exception cref="KvCorruptionException">The bytes are not a well-formed batch.</exception>
    /// <exception cref="KvException">A well-formed batch KvEngine cannot apply.</exception>
    internal static WriteBatch FromRep(ReadOnlySpan<byte> rep)
    {
        var families = new FamilyCollector(new WriteBatch(rep.Length));
        WriteBatchDecoder.Iterate(rep, ref families);
        WriteBatch batch = families.Batch;
        ByteBuffer buffer = batch.Rep;
        buffer.Truncate(0);
        buffer.Append(rep);
        return batch;
    }

    /// <summary>
    /// Appends the writes of <paramref name="other"/> after this batch's (group commit); this
    /// batch's sequence is kept, the counts add up.
    /// </summary>
    internal void Append(WriteBatch other)
    {
        ArgumentNullException.ThrowIfNull(other);
        if (ReferenceEquals(other, this))
        {
            throw new ArgumentException("A batch cannot be appended to itself.", nameof(other));
        }
        ReadOnlySpan<byte> records = other.Data.Slice(HeaderSize);
        long count = (long)Count + other.Count;
        EnsureRoom(records.Length, count);
        ByteBuffer rep = Rep;
        rep.Append(records);
        Coding.EncodeFixed32(rep.WrittenSpanMutable.Slice(8), (uint)count);
        WritesDefaultColumnFamily |= other.WritesDefaultColumnFamily;
        if (other._mergeFamilies != null)
        {
            foreach (uint id in other._mergeFamilies)
            {
                NoteMerge(id);
            }
        }
        if (other._otherFamilies != null)
        {
            foreach (uint id in other._otherFamilies)
            {
                NoteFamily(id);
            }
        }
    }

    private void NoteFamily(uint columnFamily)
    {
        if (columnFamily == 0)
        {
            WritesDefaultColumnFamily = true;
        }
        else if (!(_otherFamilies ??= new List<uint>(2)).Contains(columnFamily))
        {
            _otherFamilies.Add(columnFamily);
        }
    }

    /// <summary>Sends every write to <paramref name="handler"/> in order, without boxing it.</summary>
    internal void Iterate<THandler>(ref THandler handler)
        where THandler : struct, IWriteBatchHandler =>
        WriteBatchDecoder.Iterate(Data, ref handler);

    /// <summary>Returns the batch's buffer to its pool; the batch must not be used afterwards.</summary>
    public void Dispose()
    {
        _rep?.Dispose();
        _rep = null;
    }

    private void AddRecord(WriteBatchTag tag, uint columnFamily, ReadOnlySpan<byte> first, ReadOnlySpan<byte> second, bool hasSecond)
    {
        if ((long)first.Length + second.Length > MaxEntrySize)
        {
            throw new ArgumentException(
                $"A write of {(long)first.Length + second.Length} bytes (key and value) exceeds WriteBatch.MaxEntrySize ({MaxEntrySize} bytes).");
        }
        long size = 1 + Coding.MaxVarint32Length + (long)first.Length;
        if (hasSecond)
        {
            size += Coding.MaxVarint32Length + (long)second.Length;
        }
        EnsureRoom(size, (long)Count + 1);
        ByteBuffer rep = Rep;
        if (columnFamily == 0)
        {
            rep.AppendByte((byte)tag);
        }
        else
        {
            rep.AppendByte((byte)ColumnFamilyTag(tag));
            rep.AppendVarint32(columnFamily);
        }
        NoteFamily(columnFamily);
        rep.AppendLengthPrefixed(first);
        if (hasSecond)
        {
            rep.AppendLengthPrefixed(second);
        }
        Coding.EncodeFixed32(rep.WrittenSpanMutable.Slice(8), (uint)(Coding.DecodeFixed32(rep.WrittenSpan.Slice(8)) + 1));
    }

    private static WriteBatchTag ColumnFamilyTag(WriteBatchTag tag) => tag switch
    {
        WriteBatchTag.Value => WriteBatchTag.ColumnFamilyValue,
        WriteBatchTag.Deletion => WriteBatchTag.ColumnFamilyDeletion,
        WriteBatchTag.SingleDeletion => WriteBatchTag.ColumnFamilySingleDeletion,
        WriteBatchTag.RangeDeletion => WriteBatchTag.ColumnFamilyRangeDeletion,
        WriteBatchTag.Merge => WriteBatchTag.ColumnFamilyMerge,
        _ => throw new ArgumentOutOfRangeException(nameof(tag)),
    };

    /// <summary>Notes the families a representation read from a WAL writes.</summary>
    private struct FamilyCollector : IWriteBatchHandler
    {
        public FamilyCollector(WriteBatch batch) => Batch = batch;

        public WriteBatch Batch { get; }

        public bool SeekColumnFamily(uint columnFamily)
        {
            Batch.NoteFamily(columnFamily);
            return true;
        }

        public void Put(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) { }

        public void Delete(ReadOnlySpan<byte> key) { }

        public void SingleDelete(ReadOnlySpan<byte> key) { }

        public void DeleteRange(ReadOnlySpan<byte> begin, ReadOnlySpan<byte> end) { }

        public void Merge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) { }
    }

    private void EnsureRoom(long extraBytes, long newCount)
    {
        if (Rep.Length + extraBytes > _maxRepresentationSize)
        {
            throw new ArgumentException(
                $"The write batch would grow past {_maxRepresentationSize} bytes; split it into smaller batches.");
        }
        if (newCount > int.MaxValue)
        {
            throw new ArgumentException("The write batch would hold more than int.MaxValue writes.");
        }
    }
}
