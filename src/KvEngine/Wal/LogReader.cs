using KvEngine.Storage;
using KvEngine.Util;

namespace KvEngine.Wal;

/// <summary>
/// Reads logical records back from a WAL or MANIFEST written in RocksDB's log format (see
/// <see cref="LogWriter"/> for the grammar), reassembling fragments and judging damage the way
/// RocksDB 7.8 does (db/log_reader.cc read by db/db_impl/db_impl_open.cc with paranoid_checks on):
/// <list type="bullet">
/// <item>Torn tail (the file ends inside a header, inside a record's data, or between the
/// fragments of a record): silently the end of the log in TolerateCorruptedTailRecords and
/// SkipAnyCorruptedRecords; reported and the end of the log in PointInTimeRecovery;
/// <see cref="KvCorruptionException"/> in AbsoluteConsistency.</item>
/// <item>Damage before the end (checksum mismatch, a length running past its block, a broken
/// fragment chain, an unknown record type): reported, then SkipAnyCorruptedRecords drops the rest of
/// the block (the damaged record's fragments) and continues; PointInTimeRecovery stops (see
/// <see cref="StoppedOnCorruption"/>, <see cref="CorruptionOffset"/>); the other two throw
/// <see cref="KvCorruptionException"/>.</item>
/// <item>A zero header (type 0, length 0: preallocated space) drops the rest of its block silently.</item>
/// <item>In a WAL read with TolerateCorruptedTailRecords, a damaged record followed by zeros, and
/// nothing but zeros, to the end of the file is the torn tail of a memory-mapped log (a process
/// killed in the middle of a copy, then the reserved space): silently the end of the log. A damaged
/// record that ends the file stays corruption. Not for MANIFESTs.</item>
/// <item>Recyclable records (types 5-8) carrying another log number are left over from the file's
/// previous use: the end of the log, except in SkipAnyCorruptedRecords, which steps over them.
/// In a recycled log (first record recyclable) under TolerateCorruptedTailRecords, a checksum or
/// length error is also the end of the log.</item>
/// </list>
/// MANIFEST files are read with <see cref="WalRecoveryMode.TolerateCorruptedTailRecords"/>, as
/// RocksDB's VersionSet does: an incomplete final edit is ignored, any other damage is fatal.
/// Not thread-safe. Does not own the file. Records returned are valid until the next call.
/// </summary>
internal sealed class LogReader
{
    // Outcomes of ReadPhysicalRecord beyond the record type bytes 0..255.
    private const int Eof = 256;
    private const int BadRecord = 257;
    private const int BadHeader = 258;
    private const int BadRecordLength = 259;
    private const int BadRecordChecksum = 260;
    private const int OldRecord = 261;

    private readonly ISequentialFile _file;
    private readonly ILogReporter? _reporter;
    private readonly WalRecoveryMode _mode;
    private readonly uint _logNumber;
    private readonly bool _verifyChecksums;
    private readonly string _fileName;
    private readonly byte[] _block = new byte[LogFormat.BlockSize];

    // Unread bytes of the current block are _block[_bufferStart.._bufferEnd).
    private int _bufferStart;
    private int _bufferEnd;
    // File offset just past _block[_bufferEnd - 1].
    private long _endOfBufferOffset;
    // The last block read was short: the file has ended.
    private bool _eof;
    private bool _recycled;
    private bool _ended;
    private bool _firstRecordRead;
    private bool _compressionRecordRead;
    // File offset of the header ReadPhysicalRecord parsed last, and of bytes it dropped at the tail.
    private long _physicalOffset;
    private long _dropOffset;
    // File offset just past what the last damaged record claimed (clamped to its block).
    private long _damagedRecordEnd;
    private bool _isManifest;

    /// <param name="file">The log, positioned at its start.</param>
    /// <param name="mode">How to treat damage (see the type comment).</param>
    /// <param name="reporter">Told about every dropped byte range; may be null.</param>
    /// <param name="logNumber">The file's number; recyclable records must carry its low 32 bits.</param>
    /// <param name="verifyChecksums">Check each record's CRC (RocksDB always does for recovery).</param>
    /// <param name="fileName">Used in exception messages.</param>
    public LogReader(
        ISequentialFile file,
        WalRecoveryMode mode,
        ILogReporter? reporter = null,
        ulong logNumber = 0,
        bool verifyChecksums = true,
        string? fileName = null)
    {
        ArgumentNullException.ThrowIfNull(file);
        if (!Enum.IsDefined(mode))
        {
            throw new ArgumentOutOfRangeException(nameof(mode), mode, "Unknown WAL recovery mode.");
        }
        _file = file;
        _mode = mode;
        _reporter = reporter;
        _logNumber = (uint)logNumber;
        _verifyChecksums = verifyChecksums;
        _fileName = fileName ?? "log";
    }

    /// <summary>A reader for a MANIFEST: incomplete last edit tolerated, any other damage throws.</summary>
    public static LogReader ForManifest(ISequentialFile file, string? fileName = null) =>
        new(file, WalRecoveryMode.TolerateCorruptedTailRecords, reporter: null, logNumber: 0,
            verifyChecksums: true, fileName)
        { _isManifest = true };

    /// <summary>File offset where the last record returned starts (its first header).</summary>
    public long LastRecordOffset { get; private set; }

    /// <summary>File offset just past the last physical record consumed.</summary>
    public long LastRecordEnd => _endOfBufferOffset - (_bufferEnd - _bufferStart);

    /// <summary>True once PointInTimeRecovery stopped reading because of damage or a torn tail.</summary>
    public bool StoppedOnCorruption { get; private set; }

    /// <summary>Where reading stopped (PointInTimeRecovery), or -1.</summary>
    public long CorruptionOffset { get; private set; } = -1;

    /// <summary>Why reading stopped (PointInTimeRecovery), or null.</summary>
    public string? CorruptionReason { get; private set; }

    /// <summary>Number of damaged pieces reported (and, in SkipAnyCorruptedRecords, skipped).</summary>
    public int CorruptionCount { get; private set; }

    /// <summary>True when the first record of the file was recyclable (a reused log file).</summary>
    public bool IsRecycled => _recycled;

    /// <summary>
    /// Reads the next logical record. <paramref name="record"/> points into this reader's block
    /// buffer or into <paramref name="scratch"/>, valid until the next call or until scratch changes.
    /// Returns false at the end of the log (or where the recovery mode says to stop).
    /// </summary>
    /// <exception cref="KvCorruptionException">Damage the recovery mode does not tolerate.</exception>
    public bool TryReadRecord(ByteBuffer scratch, out ReadOnlySpan<byte> record)
    {
        ArgumentNullException.ThrowIfNull(scratch);
        record = default;
        scratch.Clear();
        if (_ended)
        {
            return false;
        }

        bool inFragmentedRecord = false;
        long prospectiveOffset = 0;
        bool reportsTail = _mode is WalRecoveryMode.AbsoluteConsistency or WalRecoveryMode.PointInTimeRecovery;
        while (true)
        {
            int dropSize = 0;
            int code = ReadPhysicalRecord(out int fragmentStart, out int fragmentLength, ref dropSize);
            ReadOnlySpan<byte> fragment = code < Eof ? _block.AsSpan(fragmentStart, fragmentLength) : default;
            switch (code)
            {
                case (int)LogRecordType.Full:
                case (int)LogRecordType.RecyclableFull:
                    if (inFragmentedRecord && scratch.Length > 0
                        && !Report(scratch.Length, "partial record without end(1)", prospectiveOffset))
                    {
                        return false;
                    }
                    scratch.Clear();
                    record = fragment;
                    LastRecordOffset = _physicalOffset;
                    _firstRecordRead = true;
                    return true;

                case (int)LogRecordType.First:
                case (int)LogRecordType.RecyclableFirst:
                    if (inFragmentedRecord && scratch.Length > 0
                        && !Report(scratch.Length, "partial record without end(2)", prospectiveOffset))
                    {
                        return false;
                    }
                    prospectiveOffset = _physicalOffset;
                    scratch.Clear();
                    scratch.Append(fragment);
                    inFragmentedRecord = true;
                    break;

                case (int)LogRecordType.Middle:
                case (int)LogRecordType.RecyclableMiddle:
                    if (!inFragmentedRecord)
                    {
                        if (!Report(fragment.Length, "missing start of fragmented record(1)", _physicalOffset))
                        {
                            return false;
                        }
                    }
                    else
                    {
                        scratch.Append(fragment);
                    }
                    break;

                case (int)LogRecordType.Last:
                case (int)LogRecordType.RecyclableLast:
                    if (!inFragmentedRecord)
                    {
                        if (!Report(fragment.Length, "missing start of fragmented record(2)", _physicalOffset))
                        {
                            return false;
                        }
                        break;
                    }
                    scratch.Append(fragment);
                    record = scratch.WrittenSpan;
                    LastRecordOffset = prospectiveOffset;
                    _firstRecordRead = true;
                    return true;

                case (int)LogRecordType.SetCompressionType:
                    if (!HandleCompressionTypeRecord(fragment))
                    {
                        return false;
                    }
                    break;

                case BadHeader:
                    if (reportsTail && !Report(dropSize, "truncated header", _dropOffset))
                    {
                        return false;
                    }
                    return EndOfLog(scratch, inFragmentedRecord, prospectiveOffset, reportsTail);

                case Eof:
                    return EndOfLog(scratch, inFragmentedRecord, prospectiveOffset, reportsTail);

                case OldRecord:
                    if (_mode != WalRecoveryMode.SkipAnyCorruptedRecords)
                    {
                        return EndOfLog(scratch, inFragmentedRecord, prospectiveOffset, reportsTail);
                    }
                    goto case BadRecord;

                case BadRecord:
                    if (inFragmentedRecord)
                    {
                        if (!Report(scratch.Length, "error in middle of record", prospectiveOffset))
                        {
                            return false;
                        }
                        inFragmentedRecord = false;
                        scratch.Clear();
                    }
                    break;

                case BadRecordLength:
                case BadRecordChecksum:
                    if (code == BadRecordLength && _eof)
                    {
                        // The file ends inside this record: a write cut short.
                        if (reportsTail && !Report(dropSize, "truncated record body", _physicalOffset))
                        {
                            return false;
                        }
                        return End(scratch);
                    }
                    if (_recycled && _mode == WalRecoveryMode.TolerateCorruptedTailRecords)
                    {
                        // Past the live records of a reused file lies the previous incarnation's data.
                        return End(scratch);
                    }
                    if (!_isManifest && _mode == WalRecoveryMode.TolerateCorruptedTailRecords && OnlyZerosFollow())
                    {
                        // A memory-mapped log (LocalMappedWritableFile) killed in the middle of a
                        // copy: one record partly written, then the zeros of reserved space. The
                        // write was never acknowledged; this is its torn tail, as a truncated record is.
                        return End(scratch);
                    }
                    string reason = code == BadRecordLength ? "bad record length" : "checksum mismatch";
                    if (!Report(dropSize, reason, _physicalOffset))
                    {
                        return false;
                    }
                    if (inFragmentedRecord)
                    {
                        if (!Report(scratch.Length, "error in middle of record", prospectiveOffset))
                        {
                            return false;
                        }
                        inFragmentedRecord = false;
                        scratch.Clear();
                    }
                    break;

                default:
                    long dropped = fragment.Length + (inFragmentedRecord ? scratch.Length : 0);
                    if (!Report(dropped, "unknown record type " + code.ToString(System.Globalization.CultureInfo.InvariantCulture), _physicalOffset))
                    {
                        return false;
                    }
                    inFragmentedRecord = false;
                    scratch.Clear();
                    break;
            }
        }
    }

    private bool EndOfLog(ByteBuffer scratch, bool inFragmentedRecord, long prospectiveOffset, bool reportsTail)
    {
        if (inFragmentedRecord && reportsTail
            && !Report(scratch.Length, "error reading trailing data", prospectiveOffset))
        {
            return false;
        }
        // A writer that died between the fragments of a record: drop the whole record.
        return End(scratch);
    }

    private bool End(ByteBuffer scratch)
    {
        scratch.Clear();
        _ended = true;
        return false;
    }

    // RocksDB's WAL compression marker. Its payload is fixed32 compression type; we read only logs
    // whose marker says "no compression" (RocksDB never writes that one, but it is well-formed).
    private bool HandleCompressionTypeRecord(ReadOnlySpan<byte> payload)
    {
        if (_compressionRecordRead && !Report(payload.Length, "read multiple SetCompressionType records", _physicalOffset))
        {
            return false;
        }
        if (_firstRecordRead && !Report(payload.Length, "SetCompressionType not the first record", _physicalOffset))
        {
            return false;
        }
        _compressionRecordRead = true;
        if (payload.Length < 4)
        {
            return Report(payload.Length, "could not decode SetCompressionType record", _physicalOffset);
        }
        uint compression = Coding.DecodeFixed32(payload);
        if (compression != 0)
        {
            throw new KvNotSupportedException(
                $"{_fileName} is compressed with RocksDB WAL compression type {compression} " +
                "(wal_compression); KvEngine reads only uncompressed logs.");
        }
        return true;
    }

    // Tells the reporter, then applies the recovery mode: true = keep reading, false = stop here.
    private bool Report(long bytesDropped, string reason, long offset)
    {
        CorruptionCount++;
        _reporter?.Corruption(bytesDropped, reason, offset);
        switch (_mode)
        {
            case WalRecoveryMode.SkipAnyCorruptedRecords:
                return true;
            case WalRecoveryMode.PointInTimeRecovery:
                _ended = true;
                StoppedOnCorruption = true;
                CorruptionOffset = offset;
                CorruptionReason = reason;
                return false;
            default:
                _ended = true;
                throw new KvCorruptionException(
                    $"Corruption in {_fileName} at offset {offset}: {reason} ({bytesDropped} bytes dropped).");
        }
    }

    // Returns a record type byte (the fragment is _block[start..start+length)) or an outcome code.
    private int ReadPhysicalRecord(out int fragmentStart, out int fragmentLength, ref int dropSize)
    {
        fragmentStart = 0;
        fragmentLength = 0;
        while (true)
        {
            int available = _bufferEnd - _bufferStart;
            if (available < LogFormat.HeaderSize)
            {
                if (!ReadMore(ref dropSize, out int outcome))
                {
                    return outcome;
                }
                continue;
            }

            ReadOnlySpan<byte> header = _block.AsSpan(_bufferStart, available);
            _physicalOffset = LastRecordEnd;
            int length = header[4] | (header[5] << 8);
            int type = header[6];
            int headerSize = LogFormat.HeaderSize;
            if (LogFormat.IsRecyclable((LogRecordType)type))
            {
                if (_physicalOffset == 0)
                {
                    _recycled = true;
                }
                headerSize = LogFormat.RecyclableHeaderSize;
                if (available < headerSize)
                {
                    if (!ReadMore(ref dropSize, out int outcome))
                    {
                        return outcome;
                    }
                    continue;
                }
                if (Coding.DecodeFixed32(header.Slice(LogFormat.HeaderSize)) != _logNumber)
                {
                    // Step over it so that a caller that keeps reading makes progress.
                    _bufferStart = headerSize + length <= available ? _bufferStart + headerSize + length : _bufferEnd;
                    return OldRecord;
                }
            }

            if (headerSize + length > available)
            {
                dropSize = available;
                _damagedRecordEnd = _endOfBufferOffset;
                _bufferStart = _bufferEnd;
                return BadRecordLength;
            }

            if (type == (int)LogRecordType.Zero && length == 0)
            {
                // Preallocated, never-written space: skip the rest of the block without a report.
                _bufferStart = _bufferEnd;
                return BadRecord;
            }

            if (_verifyChecksums)
            {
                uint expected = Crc32C.Unmask(Coding.DecodeFixed32(header));
                uint actual = Crc32C.Compute(header.Slice(6, headerSize - 6 + length));
                if (actual != expected)
                {
                    // The length may be what is damaged: trust nothing else in this block.
                    dropSize = available;
                    _damagedRecordEnd = _physicalOffset + headerSize + length;
                    _bufferStart = _bufferEnd;
                    return BadRecordChecksum;
                }
            }

            fragmentStart = _bufferStart + headerSize;
            fragmentLength = length;
            _bufferStart += headerSize + length;
            return type;
        }
    }

    // Refills the buffer with the next block. False at the end of the file, with Eof, or with
    // BadHeader when a few bytes too short for a header were left.
    private bool ReadMore(ref int dropSize, out int outcome)
    {
        if (!_eof)
        {
            // Whatever is left of a full block is its zero trailer.
            _bufferStart = 0;
            _bufferEnd = ReadBlock();
            _endOfBufferOffset += _bufferEnd;
            if (_bufferEnd < LogFormat.BlockSize)
            {
                _eof = true;
            }
            outcome = 0;
            return true;
        }

        int left = _bufferEnd - _bufferStart;
        _dropOffset = LastRecordEnd;
        _bufferStart = _bufferEnd;
        if (left > 0)
        {
            dropSize = left;
            outcome = BadHeader;
            return false;
        }
        outcome = Eof;
        return false;
    }

    // True when the last damaged record is followed by zeros, and nothing but zeros, to the end of
    // the file (at least one: a damaged record that ends the file is corruption, as in RocksDB).
    // Reads the rest of the file: only for a reader that stops here either way.
    private bool OnlyZerosFollow()
    {
        long blockStart = _endOfBufferOffset - _bufferEnd;
        int from = (int)Math.Min(_bufferEnd, _damagedRecordEnd - blockStart);
        if (_block.AsSpan(from, _bufferEnd - from).ContainsAnyExcept((byte)0))
        {
            return false;
        }
        long zeros = _bufferEnd - from;
        while (!_eof)
        {
            _bufferEnd = ReadBlock();
            _bufferStart = _bufferEnd;
            _endOfBufferOffset += _bufferEnd;
            _eof = _bufferEnd < LogFormat.BlockSize;
            if (_block.AsSpan(0, _bufferEnd).ContainsAnyExcept((byte)0))
            {
                return false;
            }
            zeros += _bufferEnd;
        }
        return zeros > 0;
    }

    private int ReadBlock()
    {
        int total = 0;
        while (total < _block.Length)
        {
            int n = _file.Read(_block.AsSpan(total));
            if (n <= 0)
            {
                break;
            }
            total += n;
        }
        return total;
    }
}
