using KvEngine.Storage;
using KvEngine.Util;

namespace KvEngine.Wal;

// Log file  := block*                       (the last block may be partial)
// block     := record* trailer?             (exactly LogFormat.BlockSize bytes)
// record    := checksum: fixed32            (masked CRC32C over type, [log_number,] data)
//              length: fixed16              (of data)
//              type: uint8                  (LogRecordType: FULL, FIRST, MIDDLE, LAST;
//                                            5..8 for the recyclable variants)
//              [log_number: fixed32]        (recyclable variants only)
//              data: uint8[length]
// trailer   := 0x00 * (0..header size - 1)  (a block tail too short for a header)
//
// A logical record is one FULL fragment, or FIRST MIDDLE* LAST. A record is never empty of
// fragments: an empty logical record is a FULL fragment with length 0.

/// <summary>
/// Appends logical records to a WAL or MANIFEST in RocksDB's log format (db/log_writer.cc).
/// <see cref="AddRecord"/> only appends to the file: the caller decides when to
/// <see cref="IWritableFile.Flush"/> or <see cref="IWritableFile.Sync"/>.
/// Does not own the file. Not thread-safe (one writer; the engine serialises appends).
/// Invariant: <c>_blockOffset</c> == bytes written to the file modulo the block size.
/// </summary>
internal sealed class LogWriter
{
    private static readonly byte[] s_zeros = new byte[LogFormat.RecyclableHeaderSize];

    private readonly IWritableFile _file;
    private readonly bool _recyclable;
    private readonly uint _logNumber;
    private readonly int _headerSize;
    private int _blockOffset;

    /// <summary>Writes non-recyclable records (RocksDB's default) after whatever the file holds.</summary>
    public LogWriter(IWritableFile file)
        : this(file, recyclable: false, logNumber: 0)
    {
    }

    /// <summary>
    /// With <paramref name="recyclable"/>, writes the recyclable record types stamped with
    /// <paramref name="logNumber"/> (low 32 bits), as RocksDB does with <c>recycle_log_file_num</c>.
    /// </summary>
    public LogWriter(IWritableFile file, bool recyclable, ulong logNumber)
    {
        ArgumentNullException.ThrowIfNull(file);
        _file = file;
        _recyclable = recyclable;
        _logNumber = (uint)logNumber;
        _headerSize = recyclable ? LogFormat.RecyclableHeaderSize : LogFormat.HeaderSize;
        _blockOffset = (int)(file.Size % LogFormat.BlockSize);
    }

    public IWritableFile File => _file;

    /// <summary>Appends one logical record, fragmenting it over blocks as needed.</summary>
    public void AddRecord(ReadOnlySpan<byte> record)
    {
        Span<byte> header = stackalloc byte[LogFormat.RecyclableHeaderSize];
        bool begin = true;
        do
        {
            int leftover = LogFormat.BlockSize - _blockOffset;
            if (leftover < _headerSize)
            {
                if (leftover > 0)
                {
                    _file.Append(s_zeros.AsSpan(0, leftover));
                }
                _blockOffset = 0;
            }

            int available = LogFormat.BlockSize - _blockOffset - _headerSize;
            int fragmentLength = Math.Min(record.Length, available);
            bool end = fragmentLength == record.Length;
            LogRecordType type = begin && end ? LogRecordType.Full
                : begin ? LogRecordType.First
                : end ? LogRecordType.Last
                : LogRecordType.Middle;
            if (_recyclable)
            {
                type += LogRecordType.RecyclableFull - LogRecordType.Full;
            }
            EmitPhysicalRecord(header, type, record[..fragmentLength]);
            record = record[fragmentLength..];
            begin = false;
        }
        while (record.Length > 0);
    }

    private void EmitPhysicalRecord(Span<byte> header, LogRecordType type, ReadOnlySpan<byte> fragment)
    {
        header[4] = (byte)fragment.Length;
        header[5] = (byte)(fragment.Length >> 8);
        header[6] = (byte)type;
        if (_recyclable)
        {
            Coding.EncodeFixed32(header.Slice(LogFormat.HeaderSize), _logNumber);
        }
        uint crc = Crc32C.Compute(header.Slice(6, _headerSize - 6));
        crc = Crc32C.Extend(crc, fragment);
        Coding.EncodeFixed32(header, Crc32C.Mask(crc));
        _file.Append(header.Slice(0, _headerSize));
        _file.Append(fragment);
        _blockOffset += _headerSize + fragment.Length;
    }
}
