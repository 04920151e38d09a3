using KvEngine.Storage;
using KvEngine.Util;
using KvEngine.Versions;
using KvEngine.Wal;

namespace KvEngine.Db.Logs;

/// <summary>
/// The WAL files in the database directory as backups and checkpoints see them (RocksDB's
/// WalManager::GetSortedWalFiles): their numbers, sizes and first sequence numbers. Reads the
/// directory and the files only; the WAL being written is described by the caller (its number
/// and its size at the last record boundary, read from <see cref="WalSet"/> under the mutex),
/// since its file may be longer than its records (a memory-mapped WAL's reserved zeros).
/// <para>
/// Thread-safety: stateless apart from the directory and file system; any thread. A WAL that an
/// obsolete-file sweep deletes between the listing and its read is left out.
/// </para>
/// </summary>
internal sealed class WalDirectory
{
    private readonly string _dir;
    private readonly IFileSystem _fs;

    public WalDirectory(string dir, IFileSystem fs)
    {
        _dir = dir;
        _fs = fs;
    }

    /// <summary>
    /// Every WAL file in the directory, ascending, with the sequence number of each one's first
    /// batch (0 for an empty WAL) and its size now (WAL <paramref name="current"/>:
    /// <paramref name="currentSize"/>, up to its last record).
    /// </summary>
    public List<(ulong Number, ulong StartSequence, long Size)> SortedWalFiles(ulong current, long currentSize)
    {
        List<ulong> numbers = Numbers(0, ulong.MaxValue);
        var result = new List<(ulong, ulong, long)>(numbers.Count);
        foreach (ulong number in numbers)
        {
            string path = FileNames.LogFile(_dir, number);
            try
            {
                long size = number == current ? currentSize : _fs.GetFileSize(path);
                result.Add((number, FirstSequence(path, number), size));
            }
            catch (FileNotFoundException)
            {
                // Deleted by a sweep since the listing: no longer live.
            }
        }
        return result;
    }

    /// <summary>The WALs numbered <paramref name="min"/> to <paramref name="current"/>, with their sizes (WAL <paramref name="current"/>: <paramref name="currentSize"/>).</summary>
    public List<(ulong Number, long Size)> LiveWals(ulong min, ulong current, long currentSize)
    {
        List<ulong> numbers = Numbers(min, current);
        var result = new List<(ulong, long)>(numbers.Count);
        foreach (ulong number in numbers)
        {
            result.Add((number, number == current ? currentSize : _fs.GetFileSize(FileNames.LogFile(_dir, number))));
        }
        return result;
    }

    /// <summary>The bytes of the WAL files on disk numbered <paramref name="min"/> or above.</summary>
    public long BytesFrom(ulong min)
    {
        long total = 0;
        foreach (ulong number in Numbers(min, ulong.MaxValue))
        {
            try
            {
                total += _fs.GetFileSize(FileNames.LogFile(_dir, number));
            }
            catch (FileNotFoundException)
            {
                // Deleted since the listing: no longer live.
            }
        }
        return total;
    }

    /// <summary>The sequence number of the first batch of WAL <paramref name="path"/>, 0 when it holds none.</summary>
    private ulong FirstSequence(string path, ulong number)
    {
        using ISequentialFile file = _fs.OpenSequential(path);
        using var scratch = new ByteBuffer(256);
        var reader = new LogReader(file, WalRecoveryMode.TolerateCorruptedTailRecords, null, number, verifyChecksums: true, fileName: path);
        return reader.TryReadRecord(scratch, out ReadOnlySpan<byte> record) && record.Length >= 8 ? Coding.DecodeFixed64(record) : 0;
    }

    /// <summary>The numbers of the WAL files in the directory within [<paramref name="min"/>, <paramref name="max"/>], ascending.</summary>
    private List<ulong> Numbers(ulong min, ulong max)
    {
        var numbers = new List<ulong>();
        foreach (string name in _fs.GetChildren(_dir))
        {
            if (FileNames.TryParse(name, out DbFileType type, out ulong number) && type == DbFileType.Log && number >= min && number <= max)
            {
                numbers.Add(number);
            }
        }
        numbers.Sort();
        return numbers;
    }
}
