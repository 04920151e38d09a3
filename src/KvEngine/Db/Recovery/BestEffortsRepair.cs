using System.Globalization;
using KvEngine.Compaction;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Versions;
using KvEngine.RangeDel;
using KvEngine.Storage;
using KvEngine.Table;

namespace KvEngine.Db.Recovery;

/// <summary>
/// Rebuilds a database whose MANIFEST lost edits from the files present
/// (<see cref="KvOptions.BestEffortsRecovery"/>; RocksDB's best_efforts_recovery with the orphan
/// adoption of its RepairDB): tables the version names but which are missing or truncated leave
/// it; every table on disk that it neither names nor retired (what the lost edits added, an
/// output a crash cut off, or a leftover that a lost edit made obsolete: nothing tells which, so
/// all are kept, as RocksDB's RepairDB does) is read whole and joins level 0 with the key and
/// sequence ranges found in it; files that cannot be read move to <c>lost/</c>, never deleted.
/// One column family only: a table whose properties name another family is refused
/// (<see cref="ReadAdoptable"/>) before anything moves. The caller then compacts the whole key
/// range, because level order no longer says which version is newer; a deletion whose tombstone a
/// lost compaction had dropped may return through a leftover. Stateless.
/// </summary>
internal static class BestEffortsRepair
{
    /// <summary>The folder, inside the database directory, that unreadable files move to.</summary>
    public const string LostDirectory = "lost";

    /// <summary>RocksDB's TablePropertiesCollectorFactory::Context::kUnknownColumnFamily (an external file's).</summary>
    private const ulong UnknownColumnFamily = int.MaxValue;

    /// <summary>
    /// Reads every table to adopt, changing nothing: what each holds (null: unreadable, or no
    /// entry). A table of another column family (one the lost edits created, which the MANIFEST
    /// does not record) cannot join the default family: <see cref="KvCorruptionException"/>, so the
    /// open is refused before anything moves.
    /// </summary>
    public static List<(ulong Number, FileMetaData? Meta)> ReadAdoptable(RecoveryDamage damage, IFileSystem fs, string dir, TableOptions options)
    {
        var adopt = new List<(ulong Number, FileMetaData? Meta)>(damage.UnnamedTables.Count);
        var foreign = new List<string>();
        foreach (ulong number in damage.UnnamedTables)
        {
            string path = FileNames.TableFile(dir, number);
            FileMetaData? meta;
            try
            {
                meta = Describe(fs, path, number, options, out TableProperties properties);
                if (properties.ColumnFamilyId is not (ColumnFamilyVersions.DefaultId or UnknownColumnFamily))
                {
                    foreign.Add(string.Create(CultureInfo.InvariantCulture,
                        $"{Path.GetFileName(path)} (column family '{properties.ColumnFamilyName}', id {properties.ColumnFamilyId})"));
                }
            }
            catch (Exception e) when (e is KvCorruptionException or IOException)
            {
                meta = null;
            }
            adopt.Add((number, meta));
        }
        if (foreign.Count > 0)
        {
            throw new KvCorruptionException(damage.Describe(dir) +
                $" Table(s) {string.Join(", ", foreign)} belong to a column family the MANIFEST does not record: BestEffortsRecovery cannot rebuild a family, so nothing was changed.");
        }
        return adopt;
    }

    /// <summary>
    /// Adds the repair to <paramref name="edit"/>: the bad tables leave the version (moved to
    /// <c>lost/</c> when present), the tables of <paramref name="adopt"/> join level 0 (unreadable
    /// ones move to <c>lost/</c>); raises <paramref name="maxSequence"/> to the newest sequence of
    /// an adopted table. Returns how many tables were adopted.
    /// </summary>
    public static int Apply(RecoveryDamage damage, List<(ulong Number, FileMetaData? Meta)> adopt, IFileSystem fs, string dir,
        VersionEdit edit, ref ulong maxSequence)
    {

        foreach ((int level, FileMetaData file, string _) in damage.BadTables)
        {
            edit.DeleteFile(level, file.Number);
            string path = FileNames.TableFile(dir, file.Number);
            if (fs.FileExists(path))
            {
                MoveToLost(fs, dir, path);
            }
        }
        int adopted = 0;
        foreach ((ulong number, FileMetaData? meta) in adopt)
        {
            if (meta == null)
            {
                MoveToLost(fs, dir, FileNames.TableFile(dir, number));
                continue;
            }
            meta.MarkedForCompaction = true; // persisted (NeedCompaction): still to be merged if the post-open compaction is cut short
            edit.AddFile(0, meta);
            maxSequence = Math.Max(maxSequence, meta.LargestSeqno);
            adopted++;
        }
        return adopted;
    }

    /// <summary>
    /// Reads table <paramref name="path"/> whole, checksums verified, and returns what the MANIFEST
    /// would record about it, or null when it holds no entry.
    /// </summary>
    public static FileMetaData? Describe(IFileSystem fs, string path, ulong number, TableOptions options) =>
        Describe(fs, path, number, options, out _);

    /// <summary>
    /// <see cref="Describe(IFileSystem, string, ulong, TableOptions)"/>, also returning the table's
    /// properties (its column family, whether it is an external file).
    /// </summary>
    public static FileMetaData? Describe(IFileSystem fs, string path, ulong number, TableOptions options, out TableProperties properties)
    {
        long size = fs.GetFileSize(path);
        IRandomAccessFile file = fs.OpenRandomAccess(path);
        TableReader reader;
        try
        {
            reader = TableReader.Open(file, size, options, path);
        }
        catch
        {
            file.Dispose();
            throw;
        }
        using (reader)
        {
            properties = reader.Properties;
            byte[]? smallest = null;
            byte[]? largest = null;
            ulong minSeq = ulong.MaxValue;
            ulong maxSeq = 0;
            using (InternalIterator it = reader.NewIterator(verifyChecksums: true, fillCache: false))
            {
                for (it.SeekToFirst(); it.Valid; it.Next())
                {
                    ulong seq = InternalKeys.Sequence(it.Key);
                    minSeq = Math.Min(minSeq, seq);
                    maxSeq = Math.Max(maxSeq, seq);
                    smallest ??= it.Key.ToArray();
                }
                if (smallest != null)
                {
                    it.SeekToLast();
                    largest = it.Valid ? it.Key.ToArray() : throw new KvCorruptionException($"{path}: the last entry could not be read back.");
                }
            }
            using (InternalIterator? tombstones = reader.NewRangeTombstoneIterator())
            {
                if (tombstones != null)
                {
                    for (tombstones.SeekToFirst(); tombstones.Valid; tombstones.Next())
                    {
                        ulong seq = InternalKeys.Sequence(tombstones.Key);
                        minSeq = Math.Min(minSeq, seq);
                        maxSeq = Math.Max(maxSeq, seq);
                        if (smallest == null || InternalKeyComparer.Compare(tombstones.Key, smallest) < 0)
                        {
                            smallest = tombstones.Key.ToArray();
                        }
                        byte[] end = RangeTombstoneWriter.Sentinel(tombstones.Value);
                        if (largest == null || InternalKeyComparer.Compare(end, largest) > 0)
                        {
                            largest = end;
                        }
                    }
                }
            }
            if (smallest == null || largest == null)
            {
                return null;
            }
            long now = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
            return new FileMetaData
            {
                Number = number,
                FileSize = (ulong)size,
                Smallest = smallest,
                Largest = largest,
                SmallestSeqno = minSeq,
                LargestSeqno = maxSeq,
                OldestAncesterTime = (ulong)now,
                FileCreationTime = (ulong)now,
            };
        }
    }

    /// <summary>Moves <paramref name="path"/> into <see cref="LostDirectory"/>, under a free name.</summary>
    internal static void MoveToLost(IFileSystem fs, string dir, string path)
    {
        string lost = Path.Combine(dir, LostDirectory);
        if (!fs.DirectoryExists(lost))
        {
            fs.CreateDirectory(lost);
        }
        string target = Path.Combine(lost, Path.GetFileName(path));
        for (int i = 1; fs.FileExists(target); i++)
        {
            target = Path.Combine(lost, Path.GetFileName(path) + "." + i.ToString(CultureInfo.InvariantCulture));
        }
        fs.RenameFile(path, target);
    }
}
