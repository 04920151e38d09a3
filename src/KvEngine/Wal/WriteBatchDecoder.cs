using KvEngine.Util;

namespace KvEngine.Wal;

/// <summary>
/// Decodes a WriteBatch representation (see <see cref="WriteBatch"/> for the grammar) as RocksDB 7.8's
/// ReadRecordFromWriteBatch and WriteBatchInternal::Iterate do, for batches KvEngine wrote and for
/// WALs RocksDB wrote:
/// <list type="bullet">
/// <item>Malformed bytes (short header, truncated record, unknown tag, count that does not match
/// the records) raise <see cref="KvCorruptionException"/>.</item>
/// <item>Each write goes to the handler after it selected the record's column family
/// (<see cref="IWriteBatchHandler.SeekColumnFamily"/>, called when the family changes); a family the
/// handler refuses has its records passed over (<see cref="IWriteBatchHandler.SkipDroppedRecord"/>).</item>
/// <item>Well-formed records KvEngine cannot apply raise <see cref="KvException"/>: integrated-BlobDB
/// blob indexes, wide-column entities, and two-phase-commit markers (RocksDB itself refuses those
/// outside TransactionDB).</item>
/// <item>LogData and Noop records carry no write: skipped and not counted, as in RocksDB.</item>
/// </list>
/// Stateless and thread-safe.
/// </summary>
internal static class WriteBatchDecoder
{
    /// <summary>sequence: fixed64, count: fixed32.</summary>
    public const int HeaderSize = 12;

    /// <summary>
    /// Checks a whole representation without applying it and returns its count. Call this on
    /// bytes read from disk before <see cref="Iterate{THandler}"/>, which applies as it goes.
    /// </summary>
    public static int Validate(ReadOnlySpan<byte> rep)
    {
        var handler = default(NullWriteBatchHandler);
        return Iterate(rep, ref handler);
    }

    /// <summary>
    /// Sends every write to <paramref name="handler"/> in order; returns the count. Records of a
    /// column family the handler refuses are counted and reported with
    /// <see cref="IWriteBatchHandler.SkipDroppedRecord"/> instead.
    /// </summary>
    public static int Iterate<THandler>(ReadOnlySpan<byte> rep, ref THandler handler)
        where THandler : struct, IWriteBatchHandler
    {
        if (rep.Length < HeaderSize)
        {
            throw new KvCorruptionException(
                $"Malformed WriteBatch: {rep.Length} bytes, shorter than its {HeaderSize}-byte header.");
        }
        uint expected = Coding.DecodeFixed32(rep.Slice(8));
        ReadOnlySpan<byte> input = rep.Slice(HeaderSize);
        uint found = 0;
        uint selected = uint.MaxValue; // no family selected yet
        bool selectedLive = false;
        while (!input.IsEmpty)
        {
            int recordOffset = rep.Length - input.Length;
            var tag = (WriteBatchTag)input[0];
            input = input.Slice(1);
            uint columnFamily = 0;
            ReadOnlySpan<byte> key;
            ReadOnlySpan<byte> value;
            switch (tag)
            {
                case WriteBatchTag.ColumnFamilyValue:
                case WriteBatchTag.Value:
                    ReadColumnFamily(tag == WriteBatchTag.ColumnFamilyValue, ref input, ref columnFamily, "Put", recordOffset);
                    ReadTwo(ref input, out key, out value, "Put", recordOffset);
                    found++;
                    if (Selects(columnFamily, ref selected, ref selectedLive, ref handler))
                    {
                        handler.Put(key, value);
                    }
                    break;

                case WriteBatchTag.ColumnFamilyDeletion:
                case WriteBatchTag.Deletion:
                    ReadColumnFamily(tag == WriteBatchTag.ColumnFamilyDeletion, ref input, ref columnFamily, "Delete", recordOffset);
                    ReadOne(ref input, out key, "Delete", recordOffset);
                    found++;
                    if (Selects(columnFamily, ref selected, ref selectedLive, ref handler))
                    {
                        handler.Delete(key);
                    }
                    break;

                case WriteBatchTag.ColumnFamilySingleDeletion:
                case WriteBatchTag.SingleDeletion:
                    ReadColumnFamily(tag == WriteBatchTag.ColumnFamilySingleDeletion, ref input, ref columnFamily, "SingleDelete", recordOffset);
                    ReadOne(ref input, out key, "SingleDelete", recordOffset);
                    found++;
                    if (Selects(columnFamily, ref selected, ref selectedLive, ref handler))
                    {
                        handler.SingleDelete(key);
                    }
                    break;

                case WriteBatchTag.ColumnFamilyRangeDeletion:
                case WriteBatchTag.RangeDeletion:
                    ReadColumnFamily(tag == WriteBatchTag.ColumnFamilyRangeDeletion, ref input, ref columnFamily, "DeleteRange", recordOffset);
                    ReadTwo(ref input, out key, out value, "DeleteRange", recordOffset);
                    found++;
                    if (Selects(columnFamily, ref selected, ref selectedLive, ref handler))
                    {
                        handler.DeleteRange(key, value);
                    }
                    break;

                case WriteBatchTag.ColumnFamilyMerge:
                case WriteBatchTag.Merge:
                    ReadColumnFamily(tag == WriteBatchTag.ColumnFamilyMerge, ref input, ref columnFamily, "Merge", recordOffset);
                    ReadTwo(ref input, out key, out value, "Merge", recordOffset);
                    found++;
                    if (Selects(columnFamily, ref selected, ref selectedLive, ref handler))
                    {
                        handler.Merge(key, value);
                    }
                    break;

                case WriteBatchTag.ColumnFamilyBlobIndex:
                case WriteBatchTag.BlobIndex:
                    ReadColumnFamily(tag == WriteBatchTag.ColumnFamilyBlobIndex, ref input, ref columnFamily, "BlobIndex", recordOffset);
                    ReadTwo(ref input, out _, out _, "BlobIndex", recordOffset);
                    throw new KvNotSupportedException(
                        $"WriteBatch record at offset {recordOffset} is an integrated-BlobDB blob reference " +
                        "(enable_blob_files); KvEngine does not support blob files.");

                case WriteBatchTag.ColumnFamilyWideColumnEntity:
                case WriteBatchTag.WideColumnEntity:
                    ReadColumnFamily(tag == WriteBatchTag.ColumnFamilyWideColumnEntity, ref input, ref columnFamily, "PutEntity", recordOffset);
                    ReadTwo(ref input, out _, out _, "PutEntity", recordOffset);
                    throw new KvNotSupportedException(
                        $"WriteBatch record at offset {recordOffset} is a wide-column entity (PutEntity); " +
                        "KvEngine does not support wide columns.");

                case WriteBatchTag.LogData:
                    ReadOne(ref input, out _, "Blob", recordOffset);
                    break;

                case WriteBatchTag.Noop:
                    break;

                case WriteBatchTag.BeginPrepareXid:
                case WriteBatchTag.BeginPersistedPrepareXid:
                case WriteBatchTag.BeginUnprepareXid:
                    throw TwoPhaseCommit(recordOffset);

                case WriteBatchTag.EndPrepareXid:
                case WriteBatchTag.CommitXid:
                case WriteBatchTag.RollbackXid:
                    ReadOne(ref input, out _, "XID", recordOffset);
                    throw TwoPhaseCommit(recordOffset);

                case WriteBatchTag.CommitXidAndTimestamp:
                    ReadTwo(ref input, out _, out _, "commit timestamp", recordOffset);
                    throw TwoPhaseCommit(recordOffset);

                default:
                    throw new KvCorruptionException(
                        $"Unknown WriteBatch tag 0x{(byte)tag:X2} at offset {recordOffset}.");
            }
        }
        if (found != expected)
        {
            throw new KvCorruptionException(
                $"WriteBatch has wrong count: header says {expected}, records hold {found}.");
        }
        return (int)found;
    }

    private static void ReadColumnFamily(bool present, scoped ref ReadOnlySpan<byte> input, ref uint columnFamily, string what, int offset)
    {
        if (present && !Coding.TryGetVarint32(ref input, out columnFamily))
        {
            throw Bad(what, offset);
        }
    }

    private static void ReadOne(scoped ref ReadOnlySpan<byte> input, out ReadOnlySpan<byte> first, string what, int offset)
    {
        if (!TryGetLengthPrefixed(ref input, out first))
        {
            throw Bad(what, offset);
        }
    }

    private static void ReadTwo(scoped ref ReadOnlySpan<byte> input, out ReadOnlySpan<byte> first, out ReadOnlySpan<byte> second, string what, int offset)
    {
        if (!TryGetLengthPrefixed(ref input, out first) || !TryGetLengthPrefixed(ref input, out second))
        {
            throw Bad(what, offset);
        }
    }

    // Coding.TryGetLengthPrefixed without capturing a reference to the span variable itself.
    private static bool TryGetLengthPrefixed(scoped ref ReadOnlySpan<byte> input, out ReadOnlySpan<byte> slice)
    {
        ReadOnlySpan<byte> source = input;
        if (!Coding.TryDecodeVarint32(source, out uint length, out int consumed)
            || (ulong)(source.Length - consumed) < length)
        {
            slice = default;
            return false;
        }
        slice = source.Slice(consumed, (int)length);
        input = source.Slice(consumed + (int)length);
        return true;
    }

    // True when the handler takes writes of the family (asked once per change of family);
    // false after telling it that a record was passed over.
    private static bool Selects<THandler>(uint columnFamily, ref uint selected, ref bool selectedLive, ref THandler handler)
        where THandler : struct, IWriteBatchHandler
    {
        if (columnFamily != selected)
        {
            selected = columnFamily;
            selectedLive = handler.SeekColumnFamily(columnFamily);
        }
        if (!selectedLive)
        {
            handler.SkipDroppedRecord();
        }
        return selectedLive;
    }

    private static KvCorruptionException Bad(string what, int offset) =>
        new($"Bad WriteBatch {what} record at offset {offset}: truncated or malformed.");

    private static KvNotSupportedException TwoPhaseCommit(int offset) =>
        new($"WriteBatch record at offset {offset} is a two-phase-commit marker: the WAL holds prepared " +
            "transactions (RocksDB TransactionDB), which KvEngine does not support.");
}
