using KvEngine.Storage;
using KvEngine.Util;
using KvEngine.Wal;

namespace KvEngine;

/// <summary>
/// Reads the records of one WAL file for diagnostics (RocksDB's <c>ldb dump_wal</c>): a WAL that
/// KvEngine or RocksDB wrote, recyclable records included. A torn last record (a crash while
/// appending) ends the file silently, as recovery treats it; damage before the tail raises
/// <see cref="KvCorruptionException"/> after the records before it. Stateless and thread-safe;
/// the enumeration holds the file open until it ends or is disposed.
/// </summary>
public static class WalFileReader
{
    /// <summary>The records of the WAL at <paramref name="path"/>, in file order, read lazily.</summary>
    /// <param name="path">A WAL file (NNNNNN.log).</param>
    /// <exception cref="FileNotFoundException">The file does not exist (raised by the first MoveNext).</exception>
    /// <exception cref="KvCorruptionException">A record is damaged, or holds a malformed write batch.</exception>
    /// <exception cref="KvException">A batch holds what KvEngine does not read (two-phase-commit markers, wide columns, blob indexes).</exception>
    public static IEnumerable<WalRecordInfo> ReadRecords(string path)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        return Read(path);
    }

    private static IEnumerable<WalRecordInfo> Read(string path)
    {
        if (!File.Exists(path))
        {
            throw new FileNotFoundException($"{path}: no such file.", path);
        }
        string name = Path.GetFileName(path);
        ulong logNumber = name.EndsWith(".log", StringComparison.Ordinal) && ulong.TryParse(name.AsSpan(0, name.Length - 4),
            System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out ulong n) ? n : 0;
        using ISequentialFile file = LocalFileSystem.Instance.OpenSequential(path);
        using var scratch = new ByteBuffer(4096);
        var reader = new LogReader(file, WalRecoveryMode.TolerateCorruptedTailRecords, reporter: null, logNumber, verifyChecksums: true, path);
        while (true)
        {
            WalRecordInfo? info = Next(reader, scratch, path);
            if (info == null)
            {
                yield break;
            }
            yield return info;
        }
    }

    private static WalRecordInfo? Next(LogReader reader, ByteBuffer scratch, string path)
    {
        if (!reader.TryReadRecord(scratch, out ReadOnlySpan<byte> record))
        {
            return null;
        }
        if (record.Length < WriteBatchDecoder.HeaderSize)
        {
            throw new KvCorruptionException($"{path}: record at offset {reader.LastRecordOffset} has {record.Length} bytes, less than a write batch header.");
        }
        var handler = new WalDumpHandler();
        WriteBatchDecoder.Iterate(record, ref handler);
        return new WalRecordInfo(reader.LastRecordOffset, Coding.DecodeFixed64(record), (int)Coding.DecodeFixed32(record[8..]), record.Length,
            handler.Operations);
    }
}
