using KvEngine.Format;
using KvEngine.Storage;
using KvEngine.Table;
using KvEngine.Util;
using KvEngine.Versions;
using KvEngine.Wal;

namespace KvEngine.Db.Recovery;

/// <summary>
/// RocksDB's RepairDB: rebuilds the MANIFEST of a database whose MANIFEST (or CURRENT) is lost or
/// damaged, from the files in its directory. Not to be confused with <see cref="BestEffortsRepair"/>,
/// which patches a readable MANIFEST during an open.
/// <para>
/// Steps, under the database's LOCK (an open database is refused):
/// <list type="number">
/// <item>every table is read whole, checksums verified (<see cref="BestEffortsRepair.Describe(IFileSystem, string, ulong, TableOptions, out TableProperties)"/>):
/// its key and sequence ranges, and its column family from the table properties
/// (<c>rocksdb.column.family.id</c> and name; an unknown id, as an external file may carry, means
/// the default family, as in RocksDB). A table that cannot be read, holds nothing, or names a
/// family id another table names differently moves to <c>lost/</c>; of two family ids with one
/// name (a family dropped and created again), the older id's tables move to <c>lost/</c>.</item>
/// <item>the old MANIFEST files move to <c>lost/</c>; a fresh MANIFEST records every family found
/// (and each family named in the descriptors, empty), all tables in level 0 (as RocksDB 7.8 does),
/// marked for compaction, the last sequence the newest one found; CURRENT names it.</item>
/// <item>the WALs are converted to tables by opening the database (its recovery replays them into
/// memtables and flushes them, skipping damaged records, as RocksDB's repair does). Each family's
/// log number is set past the WALs its tables already hold (the first WAL starting after the
/// family's newest flushed sequence), so flushed writes are not replayed twice (RocksDB replays
/// every WAL, which applies a flushed merge operand a second time). WAL records of a family no
/// table names are lost, as in RocksDB: nothing else records a family's id.</item>
/// <item>each family is compacted whole: with every table in level 0, a point lookup could
/// otherwise meet an older version in a table with newer sequence numbers.</item>
/// </list>
/// Tables of leftover obsolete files are adopted too (nothing tells them apart), so a deletion
/// that compaction had already dropped may let an older value return: the same limit as RocksDB's.
/// Stateless.
/// </para>
/// </summary>
internal static class Repairer
{
    private const ulong UnknownColumnFamily = 0x7FFFFFFF; // RocksDB's kUnknownColumnFamily

    internal sealed class Family(uint id, string name)
    {
        public uint Id { get; } = id;

        public string Name { get; } = name;

        public List<FileMetaData> Tables { get; } = [];

        public ulong FlushedSequence { get; set; } // newest sequence of its non-external tables

        public ulong LogNumber { get; set; }
    }

    public static void Repair(string path, KvOptions options, IReadOnlyList<ColumnFamilyDescriptor> descriptors)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        string dir = Path.GetFullPath(path);
        IFileSystem fs = options.FileSystem;
        if (!fs.DirectoryExists(dir))
        {
            throw new KvException($"Cannot repair '{dir}': the directory does not exist.", KvStatusCode.IOError, KvStatusSubCode.PathNotFound, null);
        }
        List<Family> families = RebuildManifest(fs, dir, descriptors);
        ConvertLogsAndCompact(dir, options, descriptors, families);
    }

    /// <summary>Steps 1 and 2 (under the LOCK): the fresh MANIFEST; returns the families it records.</summary>
    internal static List<Family> RebuildManifest(IFileSystem fs, string dir, IReadOnlyList<ColumnFamilyDescriptor> descriptors)
    {
        try
        {
            using IDisposable dbLock = LockOrThrow(fs, dir);
            return WriteFreshManifest(fs, dir, descriptors);
        }
        catch (IOException e)
        {
            throw new KvException($"Repairing '{dir}' failed: {e.Message}", e);
        }
    }

    private static IDisposable LockOrThrow(IFileSystem fs, string dir)
    {
        try
        {
            return fs.LockFile(FileNames.LockFile(dir));
        }
        catch (KvLockHeldException e)
        {
            throw new KvLockHeldException($"Database '{dir}' is open (its LOCK is held); close it before repairing it.", e);
        }
    }

    private static List<Family> WriteFreshManifest(IFileSystem fs, string dir, IReadOnlyList<ColumnFamilyDescriptor> descriptors)
    {
        var tables = new List<ulong>();
        var logs = new List<ulong>();
        var manifests = new List<string>();
        ulong maxNumber = 1;
        foreach (string name in fs.GetChildren(dir))
        {
            if (!FileNames.TryParse(name, out DbFileType type, out ulong number))
            {
                continue;
            }
            maxNumber = Math.Max(maxNumber, number);
            switch (type)
            {
                case DbFileType.Table:
                    tables.Add(number);
                    break;
                case DbFileType.Log:
                    logs.Add(number);
                    break;
                case DbFileType.Manifest:
                    manifests.Add(name);
                    break;
            }
        }
        tables.Sort();
        logs.Sort();

        var byId = new SortedDictionary<uint, Family>();
        var readOptions = new TableOptions();
        foreach (ulong number in tables)
        {
            string tablePath = FileNames.TableFile(dir, number);
            FileMetaData? meta;
            TableProperties? properties = null;
            try
            {
                meta = BestEffortsRepair.Describe(fs, tablePath, number, readOptions, out properties);
            }
            catch (Exception e) when (e is KvCorruptionException or KvException or IOException or InvalidDataException)
            {
                meta = null;
            }
            if (meta == null || properties == null || !TryFamilyOf(properties, out uint id, out string familyName))
            {
                BestEffortsRepair.MoveToLost(fs, dir, tablePath);
                continue;
            }
            if (!byId.TryGetValue(id, out Family? family))
            {
                family = new Family(id, familyName);
                byId.Add(id, family);
            }
            else if (family.Name != familyName)
            {
                BestEffortsRepair.MoveToLost(fs, dir, tablePath); // two names for one id: not ours to guess
                continue;
            }
            meta.MarkedForCompaction = true;
            family.Tables.Add(meta);
            if (properties.ExternalSstFileGlobalSeqnoOffset == 0)
            {
                family.FlushedSequence = Math.Max(family.FlushedSequence, meta.LargestSeqno);
            }
        }
        DropShadowedFamilies(fs, dir, byId);
        if (!byId.ContainsKey(ColumnFamilyVersions.DefaultId))
        {
            byId.Add(ColumnFamilyVersions.DefaultId, new Family(ColumnFamilyVersions.DefaultId, ColumnFamilyVersions.DefaultName));
        }
        uint maxId = byId.Keys.Max();
        foreach (ColumnFamilyDescriptor d in descriptors)
        {
            if (!byId.Values.Any(f => f.Name == d.Name))
            {
                maxId++;
                byId.Add(maxId, new Family(maxId, d.Name));
            }
        }

        ulong manifestNumber = maxNumber + 1;
        ulong nextFileNumber = manifestNumber + 1;
        SetLogNumbers(fs, dir, logs, byId.Values, nextFileNumber);
        ulong lastSequence = 0;
        foreach (Family f in byId.Values)
        {
            foreach (FileMetaData t in f.Tables)
            {
                lastSequence = Math.Max(lastSequence, t.LargestSeqno);
            }
        }

        foreach (string name in manifests)
        {
            BestEffortsRepair.MoveToLost(fs, dir, Path.Combine(dir, name));
        }
        WriteManifest(fs, dir, manifestNumber, nextFileNumber, lastSequence, maxId, byId.Values);
        VersionSet.WriteCurrentFile(fs, dir, manifestNumber);
        fs.SyncDirectory(dir);
        return [.. byId.Values];
    }

    private static bool TryFamilyOf(TableProperties properties, out uint id, out string name)
    {
        if (properties.ColumnFamilyId == UnknownColumnFamily)
        {
            id = ColumnFamilyVersions.DefaultId;
            name = ColumnFamilyVersions.DefaultName;
            return true;
        }
        id = (uint)properties.ColumnFamilyId;
        name = properties.ColumnFamilyName;
        if (properties.ColumnFamilyId > uint.MaxValue || name.Length == 0)
        {
            return false;
        }
        return id != ColumnFamilyVersions.DefaultId || name == ColumnFamilyVersions.DefaultName;
    }

    // A name held by several ids: a family dropped and created again. The newest id is the live one.
    private static void DropShadowedFamilies(IFileSystem fs, string dir, SortedDictionary<uint, Family> byId)
    {
        var newestByName = new Dictionary<string, uint>(StringComparer.Ordinal);
        foreach (Family f in byId.Values)
        {
            newestByName[f.Name] = f.Id; // ascending ids: the last wins
        }
        foreach (Family f in byId.Values.ToList())
        {
            if (newestByName[f.Name] != f.Id)
            {
                foreach (FileMetaData t in f.Tables)
                {
                    BestEffortsRepair.MoveToLost(fs, dir, FileNames.TableFile(dir, t.Number));
                }
                byId.Remove(f.Id);
            }
        }
    }

    // A family's log number: the first WAL whose first record is newer than everything its tables
    // hold (memtables switch to a new WAL, so a flushed memtable's writes all lie in earlier WALs).
    private static void SetLogNumbers(IFileSystem fs, string dir, List<ulong> logs, IEnumerable<Family> families, ulong nextFileNumber)
    {
        var firstSequences = new List<(ulong Log, ulong First)>();
        foreach (ulong log in logs)
        {
            if (FirstSequence(fs, FileNames.LogFile(dir, log), log) is ulong first)
            {
                firstSequences.Add((log, first));
            }
        }
        foreach (Family f in families)
        {
            f.LogNumber = nextFileNumber; // no WAL holds anything newer
            foreach ((ulong log, ulong first) in firstSequences)
            {
                if (first > f.FlushedSequence)
                {
                    f.LogNumber = log;
                    break;
                }
            }
        }
    }

    private static ulong? FirstSequence(IFileSystem fs, string path, ulong number)
    {
        try
        {
            using ISequentialFile file = fs.OpenSequential(path);
            var reader = new LogReader(file, WalRecoveryMode.SkipAnyCorruptedRecords, reporter: null, logNumber: number, fileName: path);
            using var scratch = new ByteBuffer(256);
            while (reader.TryReadRecord(scratch, out ReadOnlySpan<byte> record))
            {
                if (record.Length >= WriteBatchDecoder.HeaderSize)
                {
                    return Coding.DecodeFixed64(record);
                }
            }
        }
        catch (Exception e) when (e is KvCorruptionException or IOException)
        {
            // Unreadable: it holds nothing the open could replay.
        }
        return null;
    }

    private static void WriteManifest(IFileSystem fs, string dir, ulong manifestNumber, ulong nextFileNumber, ulong lastSequence, uint maxId,
        IEnumerable<Family> families)
    {
        using IWritableFile file = fs.CreateWritable(FileNames.ManifestFile(dir, manifestNumber));
        var log = new LogWriter(file);
        using var buf = new ByteBuffer(4096);
        foreach (Family f in families)
        {
            var files = new VersionEdit { Comparator = InternalKeyComparer.BytewiseComparatorName, LogNumber = f.LogNumber };
            if (f.Id == ColumnFamilyVersions.DefaultId)
            {
                files.PrevLogNumber = 0;
                files.NextFileNumber = nextFileNumber;
                files.LastSequence = lastSequence;
                if (maxId != 0)
                {
                    files.MaxColumnFamily = maxId;
                }
            }
            else
            {
                VersionSet.Append(log, buf, new VersionEdit { ColumnFamily = f.Id, ColumnFamilyAdd = f.Name, Comparator = InternalKeyComparer.BytewiseComparatorName });
                files.ColumnFamily = f.Id;
            }
            foreach (FileMetaData t in f.Tables)
            {
                files.AddFile(0, t);
            }
            VersionSet.Append(log, buf, files);
        }
        file.Sync();
    }

    private static void ConvertLogsAndCompact(string dir, KvOptions options, IReadOnlyList<ColumnFamilyDescriptor> descriptors, List<Family> families)
    {
        KvOptions open = options.Clone();
        open.CreateIfMissing = false;
        open.ErrorIfExists = false;
        open.WalRecoveryMode = WalRecoveryMode.SkipAnyCorruptedRecords;
        var all = new List<ColumnFamilyDescriptor>();
        foreach (Family f in families)
        {
            if (f.Id == ColumnFamilyVersions.DefaultId)
            {
                continue;
            }
            ColumnFamilyDescriptor? named = descriptors.FirstOrDefault(d => d.Name == f.Name);
            all.Add(named ?? new ColumnFamilyDescriptor(f.Name, options)); // RocksDB's unknown_cf_opts: the database's options
        }
        // A list of families must name "default" (RocksDB's rule): the caller's descriptor, or the options given.
        all.Add(descriptors.FirstOrDefault(d => d.Name == ColumnFamilyVersions.DefaultName) ?? new ColumnFamilyDescriptor(ColumnFamilyVersions.DefaultName, open));
        using KvDb db = KvDb.Open(dir, open, all);
        foreach (ColumnFamilyHandle handle in db.ColumnFamilies)
        {
            db.CompactRange(handle, null, null);
        }
        db.Close();
    }
}
