using System.Text;
using KvEngine.Format;
using KvEngine.Util;

namespace KvEngine.Versions;

/// <summary>
/// Decodes one MANIFEST record into a <see cref="VersionEdit"/> as RocksDB 7.8's
/// VersionEdit::DecodeFrom does (grammar atop <see cref="VersionEdit"/>): every known tag, the
/// older file records (NewFile, NewFile2, NewFile3), skipping of unknown tags with the safe-ignore
/// bit and of unknown NewFile4 fields without the non-safe bit. Anything else — an unknown tag,
/// a truncated field, a malformed internal key, an unknown field that must be understood, trailing
/// bytes — raises <see cref="KvCorruptionException"/>. Stateless and thread-safe.
/// </summary>
internal static class VersionEditDecoder
{
    private static readonly UTF8Encoding s_strictUtf8 = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);

    public static VersionEdit Decode(ReadOnlySpan<byte> record)
    {
        var edit = new VersionEdit();
        ReadOnlySpan<byte> input = record;
        while (!input.IsEmpty)
        {
            if (!Coding.TryGetVarint32(ref input, out uint rawTag))
            {
                throw Corrupt("invalid tag");
            }
            var tag = (VersionEditTag)rawTag;
            switch (tag)
            {
                case VersionEditTag.DbId:
                    edit.DbId = GetString(ref input, "db id");
                    break;
                case VersionEditTag.Comparator:
                    edit.Comparator = GetString(ref input, "comparator name");
                    break;
                case VersionEditTag.LogNumber:
                    edit.LogNumber = GetVarint64(ref input, "log number");
                    break;
                case VersionEditTag.PrevLogNumber:
                    edit.PrevLogNumber = GetVarint64(ref input, "previous log number");
                    break;
                case VersionEditTag.NextFileNumber:
                    edit.NextFileNumber = GetVarint64(ref input, "next file number");
                    break;
                case VersionEditTag.MaxColumnFamily:
                    edit.MaxColumnFamily = GetVarint32(ref input, "max column family");
                    break;
                case VersionEditTag.MinLogNumberToKeep:
                    edit.MinLogNumberToKeep = GetVarint64(ref input, "min log number to keep");
                    break;
                case VersionEditTag.LastSequence:
                    edit.LastSequence = GetVarint64(ref input, "last sequence number");
                    break;
                case VersionEditTag.CompactCursor:
                {
                    int level = GetLevel(ref input, "compaction cursor");
                    edit.AddCompactCursor(level, GetInternalKey(ref input, "compaction cursor"));
                    break;
                }
                case VersionEditTag.DeletedFile:
                {
                    int level = GetLevel(ref input, "deleted file");
                    edit.DeleteFile(level, GetVarint64(ref input, "deleted file"));
                    break;
                }
                case VersionEditTag.NewFile:
                case VersionEditTag.NewFile2:
                case VersionEditTag.NewFile3:
                    DecodeOldNewFile(ref input, tag, edit);
                    break;
                case VersionEditTag.NewFile4:
                    DecodeNewFile4(ref input, edit);
                    break;
                case VersionEditTag.BlobFileAddition:
                case VersionEditTag.BlobFileAdditionDeprecated:
                    edit.AddBlobFileAddition(DecodeBlobFileAddition(ref input));
                    break;
                case VersionEditTag.BlobFileGarbage:
                case VersionEditTag.BlobFileGarbageDeprecated:
                    edit.AddBlobFileGarbage(new BlobFileGarbage(
                        GetVarint64(ref input, "blob file garbage"),
                        GetVarint64(ref input, "blob file garbage"),
                        GetVarint64(ref input, "blob file garbage")));
                    SkipCustomFields(ref input, "blob file garbage");
                    break;
                case VersionEditTag.WalAddition:
                    edit.AddWal(DecodeWalAddition(ref input));
                    break;
                case VersionEditTag.WalAddition2:
                {
                    ReadOnlySpan<byte> body = GetSlice(ref input, "WalAddition not prefixed by length");
                    edit.AddWal(DecodeWalAddition(ref body));
                    break;
                }
                case VersionEditTag.WalDeletion:
                    edit.WalDeletionBefore = GetVarint64(ref input, "WAL deletion");
                    break;
                case VersionEditTag.WalDeletion2:
                {
                    ReadOnlySpan<byte> body = GetSlice(ref input, "WalDeletion not prefixed by length");
                    edit.WalDeletionBefore = GetVarint64(ref body, "WAL deletion");
                    break;
                }
                case VersionEditTag.KvEngineWalsCreated:
                {
                    ReadOnlySpan<byte> body = GetSlice(ref input, "KvEngine WALs created not prefixed by length");
                    while (!body.IsEmpty)
                    {
                        edit.AddCreatedWal(GetVarint64(ref body, "KvEngine WAL created"));
                    }
                    break;
                }
                case VersionEditTag.ColumnFamily:
                    edit.ColumnFamily = GetVarint32(ref input, "set column family id");
                    break;
                case VersionEditTag.ColumnFamilyAdd:
                    edit.ColumnFamilyAdd = GetString(ref input, "column family add");
                    break;
                case VersionEditTag.ColumnFamilyDrop:
                    edit.IsColumnFamilyDrop = true;
                    break;
                case VersionEditTag.InAtomicGroup:
                    edit.AtomicGroupRemaining = GetVarint32(ref input, "remaining entries");
                    break;
                case VersionEditTag.FullHistoryTsLow:
                {
                    ReadOnlySpan<byte> low = GetSlice(ref input, "full_history_ts_low");
                    if (low.IsEmpty)
                    {
                        throw Corrupt("full_history_ts_low: empty");
                    }
                    edit.FullHistoryTsLow = low.ToArray();
                    break;
                }
                default:
                    if ((rawTag & (uint)VersionEditTag.SafeIgnoreMask) == 0)
                    {
                        throw Corrupt($"unknown tag {rawTag}");
                    }
                    // A tag from a newer RocksDB that older readers may skip.
                    GetSlice(ref input, "safely ignorable tag length error");
                    break;
            }
        }
        return edit;
    }

    private static void DecodeOldNewFile(ref ReadOnlySpan<byte> input, VersionEditTag tag, VersionEdit edit)
    {
        string what = tag switch
        {
            VersionEditTag.NewFile => "new-file entry",
            VersionEditTag.NewFile2 => "new-file2 entry",
            _ => "new-file3 entry",
        };
        int level = GetLevel(ref input, what);
        var f = new FileMetaData { Number = GetVarint64(ref input, what) };
        if (tag == VersionEditTag.NewFile3)
        {
            f.PathId = GetVarint32(ref input, what);
            if (f.PathId > 3)
            {
                throw Corrupt("path_id wrong value");
            }
        }
        f.FileSize = GetVarint64(ref input, what);
        f.Smallest = GetInternalKey(ref input, what);
        f.Largest = GetInternalKey(ref input, what);
        if (tag == VersionEditTag.NewFile)
        {
            // LevelDB recorded no sequence numbers: RocksDB's defaults.
            f.SmallestSeqno = InternalKeys.MaxSequenceNumber;
            f.LargestSeqno = 0;
        }
        else
        {
            f.SmallestSeqno = GetVarint64(ref input, what);
            f.LargestSeqno = GetVarint64(ref input, what);
        }
        edit.AddFile(level, f);
    }

    private static void DecodeNewFile4(ref ReadOnlySpan<byte> input, VersionEdit edit)
    {
        const string what = "new-file4 entry";
        int level = GetLevel(ref input, what);
        var f = new FileMetaData
        {
            Number = GetVarint64(ref input, what),
            FileSize = GetVarint64(ref input, what),
            Smallest = GetInternalKey(ref input, what),
            Largest = GetInternalKey(ref input, what),
            SmallestSeqno = GetVarint64(ref input, what),
            LargestSeqno = GetVarint64(ref input, what),
        };
        while (true)
        {
            uint customTag = GetVarint32(ref input, "new-file4 custom field");
            if (customTag == (uint)NewFileCustomTag.Terminate)
            {
                break;
            }
            ReadOnlySpan<byte> field = GetSlice(ref input, "new-file4 custom field length prefixed slice error");
            switch ((NewFileCustomTag)customTag)
            {
                case NewFileCustomTag.PathId:
                    if (field.Length != 1)
                    {
                        throw Corrupt("path_id field wrong size");
                    }
                    if (field[0] > 3)
                    {
                        throw Corrupt("path_id wrong value");
                    }
                    f.PathId = field[0];
                    break;
                case NewFileCustomTag.OldestAncesterTime:
                    f.OldestAncesterTime = GetVarint64(ref field, "invalid oldest ancester time");
                    break;
                case NewFileCustomTag.FileCreationTime:
                    f.FileCreationTime = GetVarint64(ref field, "invalid file creation time");
                    break;
                case NewFileCustomTag.EpochNumber:
                    f.EpochNumber = GetVarint64(ref field, "invalid epoch number");
                    break;
                case NewFileCustomTag.CompensatedRangeDeletionSize:
                    f.CompensatedRangeDeletionSize = GetVarint64(ref field, "invalid compensated range deletion size");
                    break;
                case NewFileCustomTag.FileChecksum:
                    f.FileChecksum = field.ToArray();
                    break;
                case NewFileCustomTag.FileChecksumFuncName:
                    f.FileChecksumFuncName = ToText(field, "file checksum function name");
                    break;
                case NewFileCustomTag.NeedCompaction:
                    if (field.Length != 1)
                    {
                        throw Corrupt("need_compaction field wrong size");
                    }
                    f.MarkedForCompaction = field[0] == 1;
                    break;
                case NewFileCustomTag.MinLogNumberToKeepHack:
                    if (field.Length < 8)
                    {
                        throw Corrupt("deleted log number malformatted");
                    }
                    edit.MinLogNumberToKeep = Coding.DecodeFixed64(field);
                    break;
                case NewFileCustomTag.OldestBlobFileNumber:
                    f.OldestBlobFileNumber = GetVarint64(ref field, "invalid oldest blob file number");
                    break;
                case NewFileCustomTag.Temperature:
                    if (field.Length != 1)
                    {
                        throw Corrupt("temperature field wrong size");
                    }
                    f.Temperature = field[0];
                    break;
                case NewFileCustomTag.UniqueId:
                    if (field.Length != 16)
                    {
                        throw Corrupt("invalid unique id");
                    }
                    f.UniqueId0 = Coding.DecodeFixed64(field);
                    f.UniqueId1 = Coding.DecodeFixed64(field.Slice(8));
                    break;
                default:
                    if ((customTag & (uint)NewFileCustomTag.NonSafeIgnoreMask) != 0)
                    {
                        throw Corrupt($"new-file4 custom field {customTag} not supported");
                    }
                    break; // a field this reader may ignore (timestamps, newer RocksDB fields)
            }
        }
        edit.AddFile(level, f);
    }

    private static BlobFileAddition DecodeBlobFileAddition(ref ReadOnlySpan<byte> input)
    {
        const string what = "blob file addition";
        ulong number = GetVarint64(ref input, what);
        ulong count = GetVarint64(ref input, what);
        ulong bytes = GetVarint64(ref input, what);
        string method = ToText(GetSlice(ref input, what), what);
        byte[] checksum = GetSlice(ref input, what).ToArray();
        SkipCustomFields(ref input, what);
        return new BlobFileAddition(number, count, bytes, method, checksum);
    }

    // Blob records end with (tag: varint32 value: varstring)* 0 (RocksDB's kEndMarker is 0 here,
    // unlike NewFile4's kTerminate 1); bit 6 marks fields that must be known.
    private static void SkipCustomFields(ref ReadOnlySpan<byte> input, string what)
    {
        while (true)
        {
            uint tag = GetVarint32(ref input, what);
            if (tag == 0)
            {
                return;
            }
            if ((tag & 64) != 0)
            {
                throw Corrupt($"{what}: forward incompatible custom field {tag}");
            }
            GetSlice(ref input, what);
        }
    }

    private static WalAddition DecodeWalAddition(ref ReadOnlySpan<byte> input)
    {
        ulong number = GetVarint64(ref input, "WalAddition: error decoding WAL log number");
        ulong? syncedSize = null;
        while (true)
        {
            uint tag = GetVarint32(ref input, "WalAddition: error decoding tag");
            switch (tag)
            {
                case 1: // kTerminate
                    return new WalAddition(number, syncedSize);
                case 2: // kSyncedSize
                    syncedSize = GetVarint64(ref input, "WalAddition: error decoding WAL file size");
                    break;
                default:
                    throw Corrupt($"WalAddition: unknown tag {tag}");
            }
        }
    }

    private static int GetLevel(ref ReadOnlySpan<byte> input, string what)
    {
        uint level = GetVarint32(ref input, what);
        if (level > int.MaxValue)
        {
            throw Corrupt($"{what}: level {level} out of range");
        }
        return (int)level;
    }

    private static byte[] GetInternalKey(ref ReadOnlySpan<byte> input, string what)
    {
        ReadOnlySpan<byte> key = GetSlice(ref input, what);
        if (key.Length < InternalKeys.TrailerSize)
        {
            throw Corrupt($"{what}: internal key of {key.Length} bytes");
        }
        return key.ToArray();
    }

    private static uint GetVarint32(ref ReadOnlySpan<byte> input, string what)
    {
        ReadOnlySpan<byte> source = input;
        if (!Coding.TryDecodeVarint32(source, out uint value, out int consumed))
        {
            throw Corrupt(what);
        }
        input = source.Slice(consumed);
        return value;
    }

    private static ulong GetVarint64(ref ReadOnlySpan<byte> input, string what)
    {
        ReadOnlySpan<byte> source = input;
        if (!Coding.TryDecodeVarint64(source, out ulong value, out int consumed))
        {
            throw Corrupt(what);
        }
        input = source.Slice(consumed);
        return value;
    }

    private static ReadOnlySpan<byte> GetSlice(ref ReadOnlySpan<byte> input, string what)
    {
        ReadOnlySpan<byte> source = input;
        if (!Coding.TryDecodeVarint32(source, out uint length, out int consumed)
            || (ulong)(source.Length - consumed) < length)
        {
            throw Corrupt(what);
        }
        input = source.Slice(consumed + (int)length);
        return source.Slice(consumed, (int)length);
    }

    private static string GetString(ref ReadOnlySpan<byte> input, string what) => ToText(GetSlice(ref input, what), what);

    private static string ToText(ReadOnlySpan<byte> bytes, string what)
    {
        try
        {
            return s_strictUtf8.GetString(bytes);
        }
        catch (DecoderFallbackException e)
        {
            throw new KvCorruptionException($"Corruption in VersionEdit: {what} is not valid UTF-8.", e);
        }
    }

    private static KvCorruptionException Corrupt(string what) => new($"Corruption in VersionEdit: {what}.");
}
