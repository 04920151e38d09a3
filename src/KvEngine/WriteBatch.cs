using KvEngine.Util;
using KvEngine.Wal;

namespace KvEngine;

// WriteBatch := sequence: fixed64  count: fixed32  record*
// record     := Value: 0x1 key: varstring value: varstring
//             | Deletion: 0x0 key: varstring
//             | SingleDeletion: 0x7 key: varstring
//             | RangeDeletion: 0xF begin: varstring end: varstring
//             | Merge: 0x2 key: varstring operand: varstring
//             | (read only) the column-family variants 0x4 0x5 0x6 0x8 0xE with cf: varint32 after
//               the tag, LogData 0x3, Noop 0xD and the other WriteBatchTag values
// varstring  := length: varint32  bytes: uint8[length]
//
// count is the number of Value, Deletion, SingleDeletion, RangeDeletion and Merge records; each
// takes one sequence number, the first one `sequence`. This is RocksDB's WriteBatch rep
// (db/write_batch.cc): it is the payload of a WAL record as is. See docs/formats/write_batch.md.

/// <summary>
/// A group of writes applied atomically: all of them or none survive a crash. Build one with
/// <see cref="Put"/>, <see cref="Delete"/> and <see cref="DeleteRange"/>, then hand it to the database's write method.
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

    /// <summary>Creates an empty batch.</summary>
    public WriteBatch()
        : this(256)
    {
    }

    /// <param name="initialCapacity">Bytes to reserve up front.</param>
    /// <param name="maxRepresentationSize">Largest encoding the batch may reach (default ~2 GiB).</param>
    internal WriteBatch(int initialCapacity, long maxRepresentationSize = 0)
    {
        _maxRepresentationSize = maxRepresentationSize > 0
            ? Math.Min(maxRepresentationSize, DefaultMaxRepresentationSize)
            : DefaultMaxRepresentationSize;
        _rep = new ByteBuffer(Math.Max(initialCapacity, HeaderSize));
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

    /// <summary>The representation: what goes into the WAL. Valid until the batch changes.</summary>
    internal ReadOnlySpan<byte> Data => Rep.WrittenSpan;

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
        AddRecord(WriteBatchTag.Value, key, value, hasSecond: true);

    /// <summary>Removes <paramref name="key"/> (a no-op if it is absent).</summary>
    public void Delete(ReadOnlySpan<byte> key) =>
        AddRecord(WriteBatchTag.Deletion, key, default, hasSecond: false);

    /// <summary>Removes the only version of <paramref name="key"/> (RocksDB's SingleDelete).</summary>
    internal void SingleDelete(ReadOnlySpan<byte> key) =>
        AddRecord(WriteBatchTag.SingleDeletion, key, default, hasSecond: false);

    /// <summary>
    /// Removes every key in [<paramref name="begin"/>, <paramref name="end"/>) (begin inclusive,
    /// end exclusive, as RocksDB's DeleteRange), as of this write: keys written later are not affected.
    /// An empty range (begin == end) adds nothing.
    /// </summary>
    /// <exception cref="ArgumentException"><paramref name="begin"/> sorts after <paramref name="end"/>,
    /// or the batch would exceed about 2 GiB.</exception>
    public void DeleteRange(ReadOnlySpan<byte> begin, ReadOnlySpan<byte> end)
    {
        int c = begin.SequenceCompareTo(end);
        if (c > 0)
        {
            throw new ArgumentException("DeleteRange: the end key sorts before the begin key.", nameof(end));
        }
        if (c < 0)
        {
            AddRecord(WriteBatchTag.RangeDeletion, begin, end, hasSecond: true);
        }
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
        AddRecord(WriteBatchTag.Merge, key, operand, hasSecond: true);
        HasMerge = true;
    }

    /// <summary>
    /// True when a merge record was added (by <see cref="Merge"/> or <see cref="Append"/>) since the
    /// batch was created or cleared (RocksDB's HAS_MERGE content flag). A <see cref="FromRep"/> copy
    /// does not scan its records for it.
    /// </summary>
    internal bool HasMerge { get; private set; }

    /// <summary>Removes every write; the batch is empty and reusable.</summary>
    public void Clear()
    {
        ByteBuffer rep = Rep;
        rep.Truncate(HeaderSize);
        rep.WrittenSpanMutable.Clear();
        HasMerge = false;
    }

    /// <summary>
    /// Copies a representation read from a WAL into a new batch, validating it first.
    /// </summary>
    /// <exception cref="KvCorruptionException">The bytes are not a well-formed batch.</exception>
    /// <exception cref="KvException">A well-formed batch KvEngine cannot apply.</exception>
    internal static WriteBatch FromRep(ReadOnlySpan<byte> rep)
    {
        WriteBatchDecoder.Validate(rep);
        var batch = new WriteBatch(rep.Length);
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
        HasMerge |= other.HasMerge;
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

    private void AddRecord(WriteBatchTag tag, ReadOnlySpan<byte> first, ReadOnlySpan<byte> second, bool hasSecond)
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
        rep.AppendByte((byte)tag);
        rep.AppendLengthPrefixed(first);
        if (hasSecond)
        {
            rep.AppendLengthPrefixed(second);
        }
        Coding.EncodeFixed32(rep.WrittenSpanMutable.Slice(8), (uint)(Coding.DecodeFixed32(rep.WrittenSpan.Slice(8)) + 1));
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
