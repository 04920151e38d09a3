using System.Globalization;
using System.Text;
using KvEngine.Format;
using KvEngine.Storage;
using KvEngine.Util;
using KvEngine.Wal;

namespace KvEngine.Versions;

/// <summary>
/// Reads CURRENT and the MANIFEST it names, as RocksDB's VersionEditHandler does: column families
/// are created by ColumnFamilyAdd (201) and removed by ColumnFamilyDrop (202); every other edit
/// applies to the family its ColumnFamily tag (200, absent = default) names; the database-wide
/// fields (next file, last sequence, previous log, MinLogNumberToKeep, max column family) apply
/// from any edit. Ids are never reused, so an id is added at most once. Edits of a dropped family
/// (RocksDB may log a flush that raced the drop) are ignored; edits of a family never added are
/// corruption. Stateless and thread-safe.
/// </summary>
internal static class ManifestReader
{
    /// <summary>
    /// Replays the MANIFEST that CURRENT names. With <paramref name="bestEfforts"/> a damaged
    /// record ends the read instead of failing it (the state is that of the records before it),
    /// provided those records hold the database-wide fields. WAL records go to <paramref name="wals"/>.
    /// </summary>
    public static RecoveredManifest Read(IFileSystem fs, string dir, bool bestEfforts, WalTracker wals)
    {
        (string manifestName, string manifestPath, ulong manifestNumber) = Locate(fs, dir);
        var families = new SortedDictionary<uint, RecoveredFamily>
        {
            [ColumnFamilyVersions.DefaultId] = new RecoveredFamily(ColumnFamilyVersions.DefaultId, ColumnFamilyVersions.DefaultName),
        };
        var dropped = new HashSet<uint>();
        var retired = new HashSet<ulong>();
        ulong? prevLogNumber = null;
        ulong? nextFile = null;
        ulong? lastSequence = null;
        ulong minLogToKeep = 0;
        uint maxColumnFamily = 0;
        string? damage = null;
        // Blob file number -> blobs not yet garbage. RocksDB drops a blob file once all its blobs are garbage.
        var liveBlobs = new Dictionary<ulong, ulong>();
        var group = new List<VersionEdit>();
        long appliedEnd = 0; // the file offset just past the last record applied
        using (ISequentialFile file = fs.OpenSequential(manifestPath))
        using (var scratch = new ByteBuffer(1024))
        {
            LogReader reader = LogReader.ForManifest(file, manifestPath);
            while (true)
            {
                VersionEdit edit;
                try
                {
                    if (!reader.TryReadRecord(scratch, out ReadOnlySpan<byte> record))
                    {
                        break;
                    }
                    edit = VersionEdit.Decode(record);
                }
                catch (KvCorruptionException e) when (bestEfforts)
                {
                    damage = e.Message;
                    break;
                }
                // An atomic group (InAtomicGroup, counting down to 0) applies whole or not at all:
                // a group the MANIFEST ends inside was torn by a crash and is dropped.
                if (edit.IsInAtomicGroup)
                {
                    if (group.Count > 0 && group[^1].AtomicGroupRemaining != edit.AtomicGroupRemaining + 1)
                    {
                        throw new KvCorruptionException($"{manifestName} holds a broken atomic group (remaining counts out of order).");
                    }
                    group.Add(edit);
                    if (edit.AtomicGroupRemaining != 0)
                    {
                        continue;
                    }
                }
                else if (group.Count > 0)
                {
                    throw new KvCorruptionException($"{manifestName} interrupts an atomic group with another edit.");
                }
                else
                {
                    group.Add(edit);
                }
                foreach (VersionEdit e in group)
                {
                    wals.Apply(e);
                    if (e.HasMaxColumnFamily)
                    {
                        maxColumnFamily = Math.Max(maxColumnFamily, e.MaxColumnFamily);
                    }
                    maxColumnFamily = Math.Max(maxColumnFamily, e.ColumnFamily);
                    if (ApplyFamilyRecord(e, families, dropped, manifestName, retired) is RecoveredFamily family)
                    {
                        foreach ((int _, ulong number) in e.DeletedFiles)
                        {
                            retired.Add(number);
                        }
                        if (e.Comparator != null)
                        {
                            if (e.Comparator != InternalKeyComparer.BytewiseComparatorName)
                            {
                                throw new KvNotSupportedException(
                                    $"Column family '{family.Name}' uses comparator '{e.Comparator}'; KvEngine supports only '{InternalKeyComparer.BytewiseComparatorName}'.");
                            }
                            family.SawComparator = true;
                        }
                        family.Builder.Apply(e);
                        TrackBlobFiles(e, liveBlobs);
                        if (e.HasLogNumber)
                        {
                            family.LogNumber = e.LogNumber;
                            family.HasLogNumber = true;
                        }
                    }
                    prevLogNumber = e.HasPrevLogNumber ? e.PrevLogNumber : prevLogNumber;
                    nextFile = e.HasNextFileNumber ? e.NextFileNumber : nextFile;
                    lastSequence = e.HasLastSequence ? e.LastSequence : lastSequence;
                    if (e.HasMinLogNumberToKeep)
                    {
                        minLogToKeep = Math.Max(minLogToKeep, e.MinLogNumberToKeep);
                    }
                }
                group.Clear();
                appliedEnd = reader.LastRecordEnd;
            }
        }
        RecoveredFamily defaultFamily = families[ColumnFamilyVersions.DefaultId];
        if (nextFile == null || lastSequence == null || !defaultFamily.HasLogNumber)
        {
            throw new KvCorruptionException(
                $"{manifestName} lacks {(nextFile == null ? "the next file number" : lastSequence == null ? "the last sequence number" : "the log number")}.");
        }
        foreach (RecoveredFamily f in families.Values)
        {
            if (!f.SawComparator)
            {
                throw new KvCorruptionException(f.Id == 0
                    ? $"{manifestName} does not name a comparator."
                    : $"{manifestName} does not name a comparator for column family '{f.Name}'.");
            }
        }
        if (liveBlobs.Count > 0)
        {
            // Tables of such a database hold blob references (type 0x11) instead of values.
            throw new KvNotSupportedException(
                $"{manifestName} lists {liveBlobs.Count} live blob file(s) (RocksDB integrated BlobDB, enable_blob_files); KvEngine does not read blob files yet.");
        }
        return new RecoveredManifest
        {
            ManifestNumber = manifestNumber,
            Families = families,
            NextFileNumber = nextFile.Value,
            LastSequence = lastSequence.Value,
            PrevLogNumber = prevLogNumber ?? 0,
            MinLogNumberToKeep = minLogToKeep,
            MaxColumnFamily = maxColumnFamily,
            RetiredTables = retired,
            Damage = damage,
            AppliedLength = appliedEnd,
        };
    }

    /// <summary>
    /// The names of the database's live column families in id order, "default" first (RocksDB's
    /// DB::ListColumnFamilies: only the add and drop records are applied).
    /// </summary>
    public static IReadOnlyList<string> ListColumnFamilies(IFileSystem fs, string dir)
    {
        (string manifestName, string manifestPath, _) = Locate(fs, dir);
        var families = new SortedDictionary<uint, RecoveredFamily>
        {
            [ColumnFamilyVersions.DefaultId] = new RecoveredFamily(ColumnFamilyVersions.DefaultId, ColumnFamilyVersions.DefaultName),
        };
        var dropped = new HashSet<uint>();
        using (ISequentialFile file = fs.OpenSequential(manifestPath))
        using (var scratch = new ByteBuffer(1024))
        {
            LogReader reader = LogReader.ForManifest(file, manifestPath);
            while (reader.TryReadRecord(scratch, out ReadOnlySpan<byte> record))
            {
                VersionEdit edit = VersionEdit.Decode(record);
                if (edit.ColumnFamilyAdd != null || edit.IsColumnFamilyDrop)
                {
                    ApplyFamilyRecord(edit, families, dropped, manifestName);
                }
            }
        }
        var names = new List<string>(families.Count);
        foreach (RecoveredFamily f in families.Values)
        {
            names.Add(f.Name);
        }
        return names;
    }

    /// <summary>
    /// Applies the family bookkeeping of <paramref name="edit"/>. Returns the live family the
    /// edit's contents apply to, or null (a drop, or an edit of a dropped family).
    /// </summary>
    private static RecoveredFamily? ApplyFamilyRecord(VersionEdit edit, SortedDictionary<uint, RecoveredFamily> families,
        HashSet<uint> dropped, string manifestName, HashSet<ulong>? retired = null)
    {
        uint id = edit.ColumnFamily;
        string idText = id.ToString(CultureInfo.InvariantCulture);
        if (id == ColumnFamilyVersions.DefaultId && (edit.IsColumnFamilyDrop || edit.ColumnFamilyAdd is not (null or ColumnFamilyVersions.DefaultName)))
        {
            throw new KvCorruptionException($"{manifestName} adds or drops the default column family.");
        }
        if (edit.ColumnFamilyAdd is string name && id != ColumnFamilyVersions.DefaultId)
        {
            if (families.ContainsKey(id) || dropped.Contains(id))
            {
                throw new KvCorruptionException($"{manifestName} adds column family {idText} twice.");
            }
            foreach (RecoveredFamily f in families.Values)
            {
                if (f.Name == name)
                {
                    throw new KvCorruptionException($"{manifestName} adds a second column family named '{name}'.");
                }
            }
            var added = new RecoveredFamily(id, name);
            families[id] = added;
            return added;
        }
        if (edit.IsColumnFamilyDrop)
        {
            if (!families.Remove(id, out RecoveredFamily? gone))
            {
                throw new KvCorruptionException($"{manifestName} drops column family {idText}, which does not exist.");
            }
            if (retired != null)
            {
                // A dropped family's tables are retired with it.
                Version last = gone.Builder.Build(null);
                for (int level = 0; level < Version.NumLevels; level++)
                {
                    foreach (FileMetaData f in last.Files(level))
                    {
                        retired.Add(f.Number);
                    }
                }
            }
            dropped.Add(id);
            return null;
        }
        if (families.TryGetValue(id, out RecoveredFamily? family))
        {
            return family;
        }
        if (dropped.Contains(id))
        {
            return null;
        }
        throw new KvCorruptionException($"{manifestName} changes column family {idText}, which does not exist.");
    }

    /// <summary>The MANIFEST that CURRENT names: its name, path and number.</summary>
    private static (string Name, string Path, ulong Number) Locate(IFileSystem fs, string dir)
    {
        string manifestName = ReadCurrent(fs, FileNames.CurrentFile(dir));
        string manifestPath = Path.Combine(dir, manifestName);
        if (!FileNames.TryParse(manifestName, out DbFileType type, out ulong manifestNumber) || type != DbFileType.Manifest)
        {
            throw new KvCorruptionException($"CURRENT names '{manifestName}', which is not a MANIFEST file name.");
        }
        if (!fs.FileExists(manifestPath))
        {
            throw new KvCorruptionException($"CURRENT names {manifestName}, which does not exist.");
        }
        return (manifestName, manifestPath, manifestNumber);
    }

    private static string ReadCurrent(IFileSystem fs, string currentPath)
    {
        if (!fs.FileExists(currentPath))
        {
            throw new KvCorruptionException($"{currentPath} is missing.");
        }
        long size = fs.GetFileSize(currentPath);
        if (size is <= 1 or > 4096)
        {
            throw new KvCorruptionException($"CURRENT has an implausible size ({size} bytes).");
        }
        var bytes = new byte[size];
        using (IRandomAccessFile f = fs.OpenRandomAccess(currentPath))
        {
            if (f.Read(0, bytes) != size)
            {
                throw new KvCorruptionException("CURRENT is shorter than its reported size.");
            }
        }
        if (bytes[^1] != (byte)'\n')
        {
            throw new KvCorruptionException("CURRENT does not end with a newline.");
        }
        foreach (byte b in bytes.AsSpan(0, bytes.Length - 1))
        {
            if (b is < 0x21 or > 0x7E)
            {
                throw new KvCorruptionException("CURRENT holds a malformed file name.");
            }
        }
        return Encoding.ASCII.GetString(bytes, 0, bytes.Length - 1);
    }

    private static void TrackBlobFiles(VersionEdit edit, Dictionary<ulong, ulong> liveBlobs)
    {
        foreach (BlobFileAddition add in edit.BlobFileAdditions)
        {
            liveBlobs[add.BlobFileNumber] = add.TotalBlobCount;
        }
        foreach (BlobFileGarbage garbage in edit.BlobFileGarbages)
        {
            if (liveBlobs.TryGetValue(garbage.BlobFileNumber, out ulong remaining))
            {
                if (garbage.GarbageBlobCount >= remaining)
                {
                    liveBlobs.Remove(garbage.BlobFileNumber);
                }
                else
                {
                    liveBlobs[garbage.BlobFileNumber] = remaining - garbage.GarbageBlobCount;
                }
            }
        }
    }
}
