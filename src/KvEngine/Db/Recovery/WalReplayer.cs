using KvEngine.Db.Background;
using KvEngine.Db.State;
using KvEngine.Db.Write;
using KvEngine.Format;
using KvEngine.Memtable;
using KvEngine.Storage;
using KvEngine.Util;
using KvEngine.Versions;
using KvEngine.Wal;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Db.Recovery;

/// <summary>
/// Replays WALs into the families' memtables at open (RocksDB's DBImpl::RecoverLogFiles): every
/// batch is validated whole before any of it is applied (a batch is atomic), records of a family
/// whose tables already hold that WAL (its log number is above it) are skipped, and a memtable
/// that outgrows its write buffer is written to a level-0 table (<see cref="FlushRunner.BuildTable"/>)
/// and replaced, its table collected in the family's edit. Replay stops at a damaged record as the
/// <see cref="WalRecoveryMode"/> says.
/// <para>
/// A read-only open passes no flush runner: everything stays in memory. When the device is full
/// (<see cref="OutOfSpace"/>) the recovered data stays in the memtables and their logs are kept,
/// as RocksDB's avoid_flush_during_recovery does.
/// </para>
/// <para>
/// Invariants: <see cref="MaxSequence"/> is the largest sequence number replayed (or the
/// MANIFEST's, if larger); each live family has one edit, created before replay. Thread-safety:
/// none needed, it runs on the opening thread before the database is shared.
/// </para>
/// </summary>
internal sealed class WalReplayer
{
    private readonly string _dir;
    private readonly IFileSystem _fs;
    private readonly WalRecoveryMode _mode;
    private readonly ColumnFamilySet _families;
    private readonly FlushRunner? _flusher;
    private readonly Dictionary<uint, VersionEdit> _edits = new();

    /// <param name="dir">The database directory.</param>
    /// <param name="fs">Its file system.</param>
    /// <param name="mode">What a damaged record does.</param>
    /// <param name="families">The families whose memtables receive the records.</param>
    /// <param name="flusher">Writes full memtables to tables; null for a read-only open (nothing is written).</param>
    /// <param name="lastSequence">The MANIFEST's last sequence number.</param>
    public WalReplayer(string dir, IFileSystem fs, WalRecoveryMode mode, ColumnFamilySet families, FlushRunner? flusher, ulong lastSequence)
    {
        _dir = dir;
        _fs = fs;
        _mode = mode;
        _families = families;
        _flusher = flusher;
        MaxSequence = lastSequence;
        foreach (ColumnFamilyData cfd in families.Live())
        {
            _edits[cfd.Id] = new VersionEdit { ColumnFamily = cfd.Id };
        }
    }

    /// <summary>The largest sequence number recovered.</summary>
    public ulong MaxSequence { get; private set; }

    /// <summary>The WAL replay stopped in (point-in-time recovery), or 0.</summary>
    public ulong StoppedLog { get; private set; }

    /// <summary>
    /// Where the records replayed from <see cref="StoppedLog"/> end: the offset just past its last
    /// complete record before the damage.
    /// </summary>
    public long StoppedLogValidLength { get; private set; }

    /// <summary>No room to write a recovered memtable to a table: the rest stays in memory.</summary>
    public bool OutOfSpace { get; private set; }

    /// <summary>The edit collecting <paramref name="cfd"/>'s level-0 tables.</summary>
    public VersionEdit EditOf(ColumnFamilyData cfd) => _edits[cfd.Id];

    /// <summary>
    /// The WALs to replay, ascending: those at or above MinLogNumberToKeep (and the previous log).
    /// Every numbered file moves the file-number counter past it; <paramref name="anyWal"/> tells
    /// whether the directory holds any WAL at all.
    /// </summary>
    public static List<ulong> LogsToReplay(IFileSystem fs, string dir, VersionSet versions, out bool anyWal)
    {
        ulong minLog = versions.MinLogNumberToKeep;
        var logs = new List<ulong>();
        anyWal = false;
        foreach (string name in fs.GetChildren(dir))
        {
            if (FileNames.TryParse(name, out DbFileType type, out ulong number))
            {
                versions.MarkFileNumberUsed(number);
                anyWal |= type == DbFileType.Log;
                if (type == DbFileType.Log && (number >= minLog || number == versions.PrevLogNumber))
                {
                    logs.Add(number);
                }
            }
        }
        logs.Sort();
        return logs;
    }

    /// <summary>Replays <paramref name="logs"/>, oldest first; true when replay stopped at a damaged record.</summary>
    public bool Replay(List<ulong> logs)
    {
        foreach (ulong logNumber in logs)
        {
            if (ReplayLog(logNumber))
            {
                ThrowIfFamilyAheadOfWals(_families.Live(), logNumber);
                return true;
            }
        }
        return false;
    }

    /// <summary>After replay: writes every non-empty memtable to a level-0 table, unless the device is full.</summary>
    public void FlushMemTables()
    {
        foreach (ColumnFamilyData cfd in _families.Live())
        {
            if (!cfd.Mem.IsEmpty && !OutOfSpace && TryAddLevel0Table(cfd))
            {
                ReplaceMemTable(cfd);
            }
        }
    }

    /// <summary>
    /// Replay stopped inside WAL <paramref name="stoppedAt"/> (a damaged record, point-in-time or
    /// tolerate-tail recovery). A family whose tables already hold writes from a later WAL (its log
    /// number is past the damage and it has tables) would keep writes whose batches the other
    /// families lose: the database is not at any point in time, and RocksDB refuses it the same way
    /// ("SST file is ahead of WALs").
    /// </summary>
    private static void ThrowIfFamilyAheadOfWals(List<ColumnFamilyData> families, ulong stoppedAt)
    {
        foreach (ColumnFamilyData cfd in families)
        {
            Version v = cfd.Versions.Current;
            bool hasTables = false;
            for (int level = 0; level < Version.NumLevels && !hasTables; level++)
            {
                hasTables = v.NumFiles(level) > 0;
            }
            if (hasTables && cfd.Versions.LogNumber > stoppedAt)
            {
                throw new KvCorruptionException(
                    $"WAL {stoppedAt} is damaged, but column family '{cfd.Name}' holds in its tables writes from WAL {cfd.Versions.LogNumber} on " +
                    "(SST file is ahead of WALs): replaying up to the damage would split batches between families.");
            }
        }
    }

    /// <summary>Replays one WAL into the families' memtables; true when replay must stop here.</summary>
    private bool ReplayLog(ulong logNumber)
    {
        string path = FileNames.LogFile(_dir, logNumber);
        var reporter = new RecoveryReporter();
        using ISequentialFile file = _fs.OpenSequential(path);
        using var scratch = new ByteBuffer(4096, spillToNative: true); // a large record grows in native memory, freed at the end of the log
        var reader = new LogReader(file, _mode, reporter, logNumber, verifyChecksums: true, fileName: path);
        ColumnFamilyData?[] families = _families.ById;
        long validLength = 0;
        while (reader.TryReadRecord(scratch, out ReadOnlySpan<byte> record))
        {
            // Validate the whole batch before applying any of it: a batch is atomic.
            WriteBatchDecoder.Validate(record);
            ulong first = CheckReplayedSequences(record, path, out uint count);
            var inserter = new MemTableInserter(families, first, concurrent: false, logNumber, refuseMerge: true);
            WriteBatchDecoder.Iterate(record, ref inserter);
            ulong last = first + count - 1;
            if (count > 0 && last > MaxSequence)
            {
                MaxSequence = last;
            }
            foreach (ColumnFamilyData? cfd in families)
            {
                if (cfd != null && _flusher != null && cfd.Mem.IsFull(cfd.Options.WriteBufferSize + 1) && !OutOfSpace &&
                    TryAddLevel0Table(cfd))
                {
                    ReplaceMemTable(cfd);
                }
            }
            validLength = reader.LastRecordEnd;
        }
        if (reader.StoppedOnCorruption)
        {
            StoppedLog = logNumber;
            StoppedLogValidLength = validLength;
        }
        return reader.StoppedOnCorruption;
    }

    /// <summary>The family's memtable went into a table; a new one takes its place.</summary>
    private static void ReplaceMemTable(ColumnFamilyData cfd)
    {
        MemTable old = cfd.Mem;
        cfd.Mem = cfd.NewMemTable();
        old.Unref();
    }

    /// <summary>
    /// The first sequence number of a validated WAL batch holding <paramref name="count"/> writes.
    /// A batch with writes may neither start at sequence 0 nor run past
    /// <see cref="InternalKeys.MaxSequenceNumber"/> (the memtable cannot hold such a sequence):
    /// <see cref="KvCorruptionException"/>.
    /// </summary>
    internal static ulong CheckReplayedSequences(ReadOnlySpan<byte> record, string path, out uint count)
    {
        ulong first = Coding.DecodeFixed64(record);
        count = Coding.DecodeFixed32(record[8..]);
        if (first == 0 && count > 0)
        {
            throw new KvCorruptionException($"{path}: a write batch carries sequence number 0.");
        }
        if (count > 0 && first > InternalKeys.MaxSequenceNumber - (count - 1))
        {
            throw new KvCorruptionException(
                $"{path}: a write batch of {count} writes at sequence {first} runs past the largest sequence number (2^56 - 1).");
        }
        return first;
    }

    /// <summary>
    /// Writes a recovered memtable to a level-0 table; false (and <see cref="OutOfSpace"/> set)
    /// when the device is full, so recovery keeps the data in memory instead.
    /// </summary>
    private bool TryAddLevel0Table(ColumnFamilyData cfd)
    {
        FileMetaData? meta;
        try
        {
            meta = _flusher!.BuildTable(cfd, [cfd.Mem]);
        }
        catch (Exception e) when (StorageErrors.IsNoSpace(e))
        {
            OutOfSpace = true;
            return false;
        }
        if (meta != null)
        {
            _edits[cfd.Id].AddFile(0, meta);
        }
        return true;
    }

    /// <summary>Receives what the WAL reader dropped during recovery.</summary>
    private sealed class RecoveryReporter : ILogReporter
    {
        public void Corruption(long bytesDropped, string reason, long fileOffset)
        {
            // Point-in-time and skip modes drop data by design; the reader already enforces the mode.
        }
    }
}
