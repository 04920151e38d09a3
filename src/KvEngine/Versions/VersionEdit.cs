using System.Globalization;
using System.Text;
using KvEngine.Format;
using KvEngine.Util;

namespace KvEngine.Versions;

// VersionEdit := field*                       (one per MANIFEST log record; RocksDB 7.8 order)
// field := DbId 8193 name: varstring
//        | Comparator 1 name: varstring
//        | LogNumber 2 varint64 | PrevLogNumber 9 varint64 | NextFileNumber 3 varint64
//        | MaxColumnFamily 203 varint32 | MinLogNumberToKeep 10 varint64 | LastSequence 4 varint64
//        | CompactCursor 5 level: varint32 key: varstring(internal key)
//        | DeletedFile 6 level: varint32 number: varint64
//        | NewFile4 103 level: varint32 number: varint64 size: varint64
//                   smallest: varstring(internal key) largest: varstring(internal key)
//                   smallest_seqno: varint64 largest_seqno: varint64
//                   (custom_tag: varint32 value: varstring)* Terminate 1   (NewFileCustomTag)
//        | BlobFileAddition 400 number count bytes: varint64 method: varstring checksum: varstring
//                   (tag: varint32 value: varstring)* 0
//        | BlobFileGarbage 401 number count bytes: varint64 (tag: varint32 value: varstring)* 0
//        | WalAddition2 8199 varstring(number: varint64 [2 synced_size: varint64] 1)
//        | WalDeletion2 8200 varstring(number: varint64)
//        | KvEngineWalsCreated 12289 varstring(number: varint64*)   (KvEngine's own, safe to ignore)
//        | ColumnFamily 200 varint32 (omitted for 0) | ColumnFamilyAdd 201 name: varstring
//        | ColumnFamilyDrop 202 | InAtomicGroup 300 remaining: varint32
//        | FullHistoryTsLow 8198 varstring
// Read only: NewFile 7, NewFile2 100, NewFile3 102, the deprecated blob tags 8194/8195, WalAddition
// 8196, WalDeletion 8197, and any tag with bit 13 set (skipped: varint32 length + bytes).
// NewFile4 custom fields written, in 7.8's order: OldestAncesterTime 5, FileCreationTime 6,
// FileChecksum 7, FileChecksumFuncName 8 (these four always), PathId 65, Temperature 9,
// NeedCompaction 2, MinLogNumberToKeepHack 3 (first file only), OldestBlobFileNumber 4,
// UniqueId 12, EpochNumber 13, CompensatedRangeDeletionSize 14 (each only when set; 14 is RocksDB
// 8.0's, which 7.8 skips as a safe-to-ignore field). See docs/formats/manifest.md.

/// <summary>
/// One change to the database's file set and counters, as a record of the MANIFEST (RocksDB 7.8
/// db/version_edit.{h,cc}). Setting an optional field marks it present (HasXxx). Encoding follows
/// 7.8 byte for byte; decoding (<see cref="Decode"/>) also reads older and newer RocksDB fields.
/// A mutable builder; not thread-safe.
/// </summary>
internal sealed class VersionEdit
{
    private readonly List<(int Level, ulong Number)> _deletedFiles = new();
    private readonly List<(int Level, FileMetaData File)> _newFiles = new();
    private readonly List<(int Level, byte[] Key)> _compactCursors = new();
    private readonly List<BlobFileAddition> _blobFileAdditions = new();
    private readonly List<BlobFileGarbage> _blobFileGarbages = new();
    private readonly List<WalAddition> _walAdditions = new();
    private readonly List<ulong> _createdWals = new();
    private ulong _logNumber;
    private ulong _prevLogNumber;
    private ulong _nextFileNumber;
    private ulong _lastSequence;
    private ulong _minLogNumberToKeep;
    private uint _maxColumnFamily;
    private uint _atomicGroupRemaining;
    private ulong _walDeletionBefore;

    public string? DbId { get; set; }

    public string? Comparator { get; set; }

    public bool HasLogNumber { get; private set; }

    public ulong LogNumber
    {
        get => _logNumber;
        set { _logNumber = value; HasLogNumber = true; }
    }

    public bool HasPrevLogNumber { get; private set; }

    public ulong PrevLogNumber
    {
        get => _prevLogNumber;
        set { _prevLogNumber = value; HasPrevLogNumber = true; }
    }

    public bool HasNextFileNumber { get; private set; }

    public ulong NextFileNumber
    {
        get => _nextFileNumber;
        set { _nextFileNumber = value; HasNextFileNumber = true; }
    }

    public bool HasLastSequence { get; private set; }

    public ulong LastSequence
    {
        get => _lastSequence;
        set { _lastSequence = value; HasLastSequence = true; }
    }

    public bool HasMinLogNumberToKeep { get; private set; }

    public ulong MinLogNumberToKeep
    {
        get => _minLogNumberToKeep;
        set { _minLogNumberToKeep = value; HasMinLogNumberToKeep = true; }
    }

    public bool HasMaxColumnFamily { get; private set; }

    public uint MaxColumnFamily
    {
        get => _maxColumnFamily;
        set { _maxColumnFamily = value; HasMaxColumnFamily = true; }
    }

    /// <summary>The column family the edit applies to (0 = default; 0 is not written).</summary>
    public uint ColumnFamily { get; set; }

    /// <summary>Non-null when the edit creates column family <see cref="ColumnFamily"/> with this name.</summary>
    public string? ColumnFamilyAdd { get; set; }

    public bool IsColumnFamilyDrop { get; set; }

    /// <summary>True when the edit is part of an atomic group (see <see cref="AtomicGroupRemaining"/>).</summary>
    public bool IsInAtomicGroup { get; private set; }

    /// <summary>How many edits of the atomic group follow this one.</summary>
    public uint AtomicGroupRemaining
    {
        get => _atomicGroupRemaining;
        set { _atomicGroupRemaining = value; IsInAtomicGroup = true; }
    }

    /// <summary>User-defined-timestamp low bound; null when absent (never empty when present).</summary>
    public byte[]? FullHistoryTsLow { get; set; }

    public bool HasWalDeletion { get; private set; }

    /// <summary>WALs numbered below this are no longer tracked.</summary>
    public ulong WalDeletionBefore
    {
        get => _walDeletionBefore;
        set { _walDeletionBefore = value; HasWalDeletion = true; }
    }

    public IReadOnlyList<(int Level, ulong Number)> DeletedFiles => _deletedFiles;

    public IReadOnlyList<(int Level, FileMetaData File)> NewFiles => _newFiles;

    public IReadOnlyList<(int Level, byte[] Key)> CompactCursors => _compactCursors;

    public IReadOnlyList<BlobFileAddition> BlobFileAdditions => _blobFileAdditions;

    public IReadOnlyList<BlobFileGarbage> BlobFileGarbages => _blobFileGarbages;

    public IReadOnlyList<WalAddition> WalAdditions => _walAdditions;

    /// <summary>WALs KvEngine created (its own safe-to-ignore tag; see WalTracker).</summary>
    public IReadOnlyList<ulong> CreatedWals => _createdWals;

    public void AddCreatedWal(ulong number) => _createdWals.Add(number);

    public void AddFile(int level, FileMetaData file)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(level);
        ArgumentNullException.ThrowIfNull(file);
        if (file.Smallest.Length < InternalKeys.TrailerSize || file.Largest.Length < InternalKeys.TrailerSize)
        {
            throw new ArgumentException("Smallest and largest must be internal keys (at least 8 bytes).", nameof(file));
        }
        if (file.PathId > 3)
        {
            throw new ArgumentException("PathId must be 0..3.", nameof(file));
        }
        _newFiles.Add((level, file));
    }

    /// <summary>Records that file <paramref name="number"/> leaves <paramref name="level"/> (once).</summary>
    public void DeleteFile(int level, ulong number)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(level);
        if (!_deletedFiles.Contains((level, number)))
        {
            _deletedFiles.Add((level, number));
        }
    }

    public void AddCompactCursor(int level, byte[] internalKey)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(level);
        ArgumentNullException.ThrowIfNull(internalKey);
        if (internalKey.Length < InternalKeys.TrailerSize)
        {
            throw new ArgumentException("A compact cursor is an internal key (at least 8 bytes).", nameof(internalKey));
        }
        _compactCursors.Add((level, internalKey));
    }

    public void AddBlobFileAddition(BlobFileAddition addition)
    {
        ArgumentNullException.ThrowIfNull(addition);
        _blobFileAdditions.Add(addition);
    }

    public void AddBlobFileGarbage(BlobFileGarbage garbage)
    {
        ArgumentNullException.ThrowIfNull(garbage);
        _blobFileGarbages.Add(garbage);
    }

    public void AddWal(WalAddition wal)
    {
        ArgumentNullException.ThrowIfNull(wal);
        _walAdditions.Add(wal);
    }

    /// <summary>Decodes one MANIFEST record. Throws <see cref="KvCorruptionException"/> on bad bytes.</summary>
    public static VersionEdit Decode(ReadOnlySpan<byte> record) => VersionEditDecoder.Decode(record);

    /// <summary>Appends the edit's encoding (RocksDB 7.8's VersionEdit::EncodeTo) to <paramref name="dst"/>.</summary>
    public void EncodeTo(ByteBuffer dst)
    {
        ArgumentNullException.ThrowIfNull(dst);
        if (DbId is not null)
        {
            dst.AppendVarint32((uint)VersionEditTag.DbId);
            AppendString(dst, DbId);
        }
        if (Comparator is not null)
        {
            dst.AppendVarint32((uint)VersionEditTag.Comparator);
            AppendString(dst, Comparator);
        }
        AppendNumber(dst, HasLogNumber, VersionEditTag.LogNumber, _logNumber);
        AppendNumber(dst, HasPrevLogNumber, VersionEditTag.PrevLogNumber, _prevLogNumber);
        AppendNumber(dst, HasNextFileNumber, VersionEditTag.NextFileNumber, _nextFileNumber);
        if (HasMaxColumnFamily)
        {
            dst.AppendVarint32((uint)VersionEditTag.MaxColumnFamily);
            dst.AppendVarint32(_maxColumnFamily);
        }
        AppendNumber(dst, HasMinLogNumberToKeep, VersionEditTag.MinLogNumberToKeep, _minLogNumberToKeep);
        AppendNumber(dst, HasLastSequence, VersionEditTag.LastSequence, _lastSequence);
        foreach ((int level, byte[] key) in _compactCursors)
        {
            dst.AppendVarint32((uint)VersionEditTag.CompactCursor);
            dst.AppendVarint32((uint)level);
            dst.AppendLengthPrefixed(key);
        }
        foreach ((int level, ulong number) in _deletedFiles)
        {
            dst.AppendVarint32((uint)VersionEditTag.DeletedFile);
            dst.AppendVarint32((uint)level);
            dst.AppendVarint64(number);
        }
        bool minLogWritten = false;
        foreach ((int level, FileMetaData file) in _newFiles)
        {
            EncodeNewFile4(dst, level, file, ref minLogWritten);
        }
        foreach (BlobFileAddition blob in _blobFileAdditions)
        {
            dst.AppendVarint32((uint)VersionEditTag.BlobFileAddition);
            dst.AppendVarint64(blob.BlobFileNumber);
            dst.AppendVarint64(blob.TotalBlobCount);
            dst.AppendVarint64(blob.TotalBlobBytes);
            AppendString(dst, blob.ChecksumMethod);
            dst.AppendLengthPrefixed(blob.ChecksumValue);
            dst.AppendVarint32(0); // kEndMarker: end of custom fields
        }
        foreach (BlobFileGarbage garbage in _blobFileGarbages)
        {
            dst.AppendVarint32((uint)VersionEditTag.BlobFileGarbage);
            dst.AppendVarint64(garbage.BlobFileNumber);
            dst.AppendVarint64(garbage.GarbageBlobCount);
            dst.AppendVarint64(garbage.GarbageBlobBytes);
            dst.AppendVarint32(0); // kEndMarker: end of custom fields
        }
        Span<byte> body = stackalloc byte[2 * Coding.MaxVarint64Length + 2];
        foreach (WalAddition wal in _walAdditions)
        {
            dst.AppendVarint32((uint)VersionEditTag.WalAddition2);
            int n = Coding.EncodeVarint64(body, wal.LogNumber);
            if (wal.SyncedSize is ulong synced)
            {
                body[n++] = 2; // kSyncedSize
                n += Coding.EncodeVarint64(body.Slice(n), synced);
            }
            body[n++] = 1; // kTerminate
            dst.AppendLengthPrefixed(body.Slice(0, n));
        }
        if (HasWalDeletion)
        {
            dst.AppendVarint32((uint)VersionEditTag.WalDeletion2);
            dst.AppendLengthPrefixed(body.Slice(0, Coding.EncodeVarint64(body, _walDeletionBefore)));
        }
        if (_createdWals.Count > 0)
        {
            using var numbers = new ByteBuffer(_createdWals.Count * Coding.MaxVarint64Length);
            foreach (ulong n in _createdWals)
            {
                numbers.AppendVarint64(n);
            }
            dst.AppendVarint32((uint)VersionEditTag.KvEngineWalsCreated);
            dst.AppendLengthPrefixed(numbers.WrittenSpan);
        }
        if (ColumnFamily != 0)
        {
            dst.AppendVarint32((uint)VersionEditTag.ColumnFamily);
            dst.AppendVarint32(ColumnFamily);
        }
        if (ColumnFamilyAdd is not null)
        {
            dst.AppendVarint32((uint)VersionEditTag.ColumnFamilyAdd);
            AppendString(dst, ColumnFamilyAdd);
        }
        if (IsColumnFamilyDrop)
        {
            dst.AppendVarint32((uint)VersionEditTag.ColumnFamilyDrop);
        }
        if (IsInAtomicGroup)
        {
            dst.AppendVarint32((uint)VersionEditTag.InAtomicGroup);
            dst.AppendVarint32(_atomicGroupRemaining);
        }
        if (FullHistoryTsLow is not null)
        {
            if (FullHistoryTsLow.Length == 0)
            {
                throw new InvalidOperationException("FullHistoryTsLow must not be empty when set.");
            }
            dst.AppendVarint32((uint)VersionEditTag.FullHistoryTsLow);
            dst.AppendLengthPrefixed(FullHistoryTsLow);
        }
    }

    private void EncodeNewFile4(ByteBuffer dst, int level, FileMetaData f, ref bool minLogWritten)
    {
        if (f.Smallest.Length < InternalKeys.TrailerSize || f.Largest.Length < InternalKeys.TrailerSize || f.PathId > 3)
        {
            throw new InvalidOperationException($"File {f.Number} has malformed boundaries or path id.");
        }
        Span<byte> varint = stackalloc byte[Coding.MaxVarint64Length];
        dst.AppendVarint32((uint)VersionEditTag.NewFile4);
        dst.AppendVarint32((uint)level);
        dst.AppendVarint64(f.Number);
        dst.AppendVarint64(f.FileSize);
        dst.AppendLengthPrefixed(f.Smallest);
        dst.AppendLengthPrefixed(f.Largest);
        dst.AppendVarint64(f.SmallestSeqno);
        dst.AppendVarint64(f.LargestSeqno);
        AppendVarintField(dst, varint, NewFileCustomTag.OldestAncesterTime, f.OldestAncesterTime);
        AppendVarintField(dst, varint, NewFileCustomTag.FileCreationTime, f.FileCreationTime);
        dst.AppendVarint32((uint)NewFileCustomTag.FileChecksum);
        dst.AppendLengthPrefixed(f.FileChecksum);
        dst.AppendVarint32((uint)NewFileCustomTag.FileChecksumFuncName);
        AppendString(dst, f.FileChecksumFuncName);
        if (f.PathId != 0)
        {
            AppendByteField(dst, NewFileCustomTag.PathId, (byte)f.PathId);
        }
        if (f.Temperature != 0)
        {
            AppendByteField(dst, NewFileCustomTag.Temperature, f.Temperature);
        }
        if (f.MarkedForCompaction)
        {
            AppendByteField(dst, NewFileCustomTag.NeedCompaction, 1);
        }
        if (HasMinLogNumberToKeep && !minLogWritten)
        {
            dst.AppendVarint32((uint)NewFileCustomTag.MinLogNumberToKeepHack);
            dst.AppendVarint32(8);
            dst.AppendFixed64(_minLogNumberToKeep);
            minLogWritten = true;
        }
        if (f.OldestBlobFileNumber != 0)
        {
            AppendVarintField(dst, varint, NewFileCustomTag.OldestBlobFileNumber, f.OldestBlobFileNumber);
        }
        if (f.HasUniqueId)
        {
            dst.AppendVarint32((uint)NewFileCustomTag.UniqueId);
            dst.AppendVarint32(16);
            dst.AppendFixed64(f.UniqueId0);
            dst.AppendFixed64(f.UniqueId1);
        }
        if (f.EpochNumber != 0)
        {
            AppendVarintField(dst, varint, NewFileCustomTag.EpochNumber, f.EpochNumber);
        }
        if (f.CompensatedRangeDeletionSize != 0)
        {
            AppendVarintField(dst, varint, NewFileCustomTag.CompensatedRangeDeletionSize, f.CompensatedRangeDeletionSize);
        }
        dst.AppendVarint32((uint)NewFileCustomTag.Terminate);
    }

    private static void AppendNumber(ByteBuffer dst, bool present, VersionEditTag tag, ulong value)
    {
        if (present)
        {
            dst.AppendVarint32((uint)tag);
            dst.AppendVarint64(value);
        }
    }

    private static void AppendVarintField(ByteBuffer dst, Span<byte> scratch, NewFileCustomTag tag, ulong value)
    {
        dst.AppendVarint32((uint)tag);
        dst.AppendLengthPrefixed(scratch.Slice(0, Coding.EncodeVarint64(scratch, value)));
    }

    private static void AppendByteField(ByteBuffer dst, NewFileCustomTag tag, byte value)
    {
        dst.AppendVarint32((uint)tag);
        dst.AppendVarint32(1);
        dst.AppendByte(value);
    }

    private static void AppendString(ByteBuffer dst, string value) => dst.AppendLengthPrefixed(Encoding.UTF8.GetBytes(value));

    /// <summary>
    /// Text in the layout of RocksDB 7.8's VersionEdit::DebugString (what `ldb manifest_dump
    /// --verbose` prints), minus the public unique id. Printable ASCII keys print as is, others as 0x-hex.
    /// </summary>
    public override string ToString()
    {
        var r = new StringBuilder("VersionEdit {");
        CultureInfo c = CultureInfo.InvariantCulture;
        if (DbId is not null) r.Append(c, $"\n  DB ID: {DbId}");
        if (Comparator is not null) r.Append(c, $"\n  Comparator: {Comparator}");
        if (HasLogNumber) r.Append(c, $"\n  LogNumber: {_logNumber}");
        if (HasPrevLogNumber) r.Append(c, $"\n  PrevLogNumber: {_prevLogNumber}");
        if (HasNextFileNumber) r.Append(c, $"\n  NextFileNumber: {_nextFileNumber}");
        if (HasMaxColumnFamily) r.Append(c, $"\n  MaxColumnFamily: {_maxColumnFamily}");
        if (HasMinLogNumberToKeep) r.Append(c, $"\n  MinLogNumberToKeep: {_minLogNumberToKeep}");
        if (HasLastSequence) r.Append(c, $"\n  LastSeq: {_lastSequence}");
        foreach ((int level, byte[] key) in _compactCursors) r.Append(c, $"\n  CompactCursor: {level} {KeyText(key)}");
        foreach ((int level, ulong number) in _deletedFiles) r.Append(c, $"\n  DeleteFile: {level} {number}");
        foreach ((int level, FileMetaData f) in _newFiles)
        {
            r.Append(c, $"\n  AddFile: {level} {f.Number} {f.FileSize} {KeyText(f.Smallest)} .. {KeyText(f.Largest)}");
            if (f.OldestBlobFileNumber != 0) r.Append(c, $" blob_file:{f.OldestBlobFileNumber}");
            r.Append(c, $" oldest_ancester_time:{f.OldestAncesterTime} file_creation_time:{f.FileCreationTime}");
            r.Append(c, $" file_checksum:{Convert.ToHexString(f.FileChecksum)} file_checksum_func_name: {f.FileChecksumFuncName}");
            if (f.Temperature != 0) r.Append(c, $" temperature: {f.Temperature}");
            if (f.HasUniqueId) r.Append(c, $" unique_id(internal): {{{f.UniqueId0},{f.UniqueId1}}}");
            if (f.CompensatedRangeDeletionSize != 0) r.Append(c, $" compensated_range_deletion_size: {f.CompensatedRangeDeletionSize}");
        }
        foreach (BlobFileAddition b in _blobFileAdditions) r.Append(c, $"\n  BlobFileAddition: blob_file_number: {b.BlobFileNumber} total_blob_count: {b.TotalBlobCount} total_blob_bytes: {b.TotalBlobBytes}");
        foreach (BlobFileGarbage g in _blobFileGarbages) r.Append(c, $"\n  BlobFileGarbage: blob_file_number: {g.BlobFileNumber} garbage_blob_count: {g.GarbageBlobCount} garbage_blob_bytes: {g.GarbageBlobBytes}");
        foreach (WalAddition w in _walAdditions) r.Append(c, $"\n  WalAddition: log_number: {w.LogNumber} synced_size_in_bytes: {w.SyncedSize?.ToString(c) ?? "unknown"}");
        if (HasWalDeletion) r.Append(c, $"\n  WalDeletion: log_number: {_walDeletionBefore}");
        foreach (ulong n in _createdWals) r.Append(c, $"\n  KvEngineWalCreated: log_number: {n}");
        r.Append(c, $"\n  ColumnFamily: {ColumnFamily}");
        if (ColumnFamilyAdd is not null) r.Append(c, $"\n  ColumnFamilyAdd: {ColumnFamilyAdd}");
        if (IsColumnFamilyDrop) r.Append("\n  ColumnFamilyDrop");
        if (IsInAtomicGroup) r.Append(c, $"\n  AtomicGroup: {_atomicGroupRemaining} entries remains");
        if (FullHistoryTsLow is not null) r.Append(c, $"\n FullHistoryTsLow: {Convert.ToHexString(FullHistoryTsLow)}");
        return r.Append("\n}").ToString();
    }

    // ParsedInternalKey::DebugString: 'user key' seq:N, type:T
    private static string KeyText(byte[] internalKey)
    {
        ReadOnlySpan<byte> user = InternalKeys.UserKey(internalKey);
        ulong trailer = InternalKeys.Trailer(internalKey);
        bool printable = true;
        foreach (byte b in user)
        {
            printable &= b is >= 0x20 and < 0x7F;
        }
        string text = printable ? Encoding.ASCII.GetString(user) : "0x" + Convert.ToHexString(user);
        return string.Create(CultureInfo.InvariantCulture, $"'{text}' seq:{trailer >> 8}, type:{trailer & 0xFF}");
    }
}
