using KvEngine.Storage;
using KvEngine.Util;
using KvEngine.Versions;
using KvEngine.Wal;
using Version = KvEngine.Versions.Version;

namespace KvEngine;

/// <summary>
/// What a MANIFEST says, for diagnostics (RocksDB's <c>ldb manifest_dump</c>): every edit in order
/// (<see cref="Edits"/>, RocksDB's VersionEdit::DebugString layout), and the state they add up to:
/// the database-wide counters and, per live column family, its log number, comparator and the
/// live tables of each level. Reads the file only; the database may be open elsewhere. Edits are
/// applied in file order, atomic groups included; a torn last record (a crash while appending) is
/// ignored, as recovery ignores it. Immutable once read; thread-safe.
/// </summary>
public sealed class ManifestInfo
{
    private ManifestInfo(string path, IReadOnlyList<ManifestColumnFamilyInfo> families, IReadOnlyList<string> edits,
        ulong nextFile, ulong lastSequence, ulong prevLog, uint maxColumnFamily, ulong minLogToKeep)
    {
        ManifestPath = path;
        ColumnFamilies = families;
        Edits = edits;
        NextFileNumber = nextFile;
        LastSequence = lastSequence;
        PrevLogNumber = prevLog;
        MaxColumnFamily = maxColumnFamily;
        MinLogNumberToKeep = minLogToKeep;
    }

    /// <summary>The MANIFEST file read.</summary>
    public string ManifestPath { get; }

    /// <summary>The live column families, by id.</summary>
    public IReadOnlyList<ManifestColumnFamilyInfo> ColumnFamilies { get; }

    /// <summary>Every edit of the file, in order, as text (RocksDB's VersionEdit::DebugString).</summary>
    public IReadOnlyList<string> Edits { get; }

    /// <summary>The next file number the MANIFEST records (RocksDB's recovery, and ldb, use one past it).</summary>
    public ulong NextFileNumber { get; }

    /// <summary>The last sequence number recorded.</summary>
    public ulong LastSequence { get; }

    /// <summary>The previous log number (0 in databases of current versions).</summary>
    public ulong PrevLogNumber { get; }

    /// <summary>The largest column family id ever used.</summary>
    public uint MaxColumnFamily { get; }

    /// <summary>The oldest WAL recovery needs.</summary>
    public ulong MinLogNumberToKeep { get; }

    /// <summary>Reads the MANIFEST that the CURRENT file of the database at <paramref name="dbPath"/> names.</summary>
    /// <param name="dbPath">A database directory.</param>
    /// <exception cref="FileNotFoundException">The directory has no CURRENT file, or CURRENT names a missing MANIFEST.</exception>
    /// <exception cref="KvCorruptionException">CURRENT or the MANIFEST is damaged, or its edits contradict each other.</exception>
    public static ManifestInfo Read(string dbPath)
    {
        ArgumentException.ThrowIfNullOrEmpty(dbPath);
        string current = Path.Combine(dbPath, "CURRENT");
        if (!File.Exists(current))
        {
            throw new FileNotFoundException($"{dbPath} is not a database: it has no CURRENT file.", current);
        }
        string name = File.ReadAllText(current);
        if (!name.EndsWith('\n') || !name.StartsWith("MANIFEST-", StringComparison.Ordinal) || name.AsSpan(0, name.Length - 1).ContainsAny('/', '\n'))
        {
            throw new KvCorruptionException($"{current} does not name a MANIFEST.");
        }
        return ReadFile(Path.Combine(dbPath, name[..^1]));
    }

    /// <summary>Reads the MANIFEST file at <paramref name="manifestPath"/> (any MANIFEST, not only the current one).</summary>
    /// <param name="manifestPath">A MANIFEST file.</param>
    /// <exception cref="FileNotFoundException">The file does not exist.</exception>
    /// <exception cref="KvCorruptionException">The file is damaged, or its edits contradict each other.</exception>
    public static ManifestInfo ReadFile(string manifestPath)
    {
        ArgumentException.ThrowIfNullOrEmpty(manifestPath);
        if (!File.Exists(manifestPath))
        {
            throw new FileNotFoundException($"{manifestPath}: no such file.", manifestPath);
        }
        var families = new SortedDictionary<uint, (string Name, VersionBuilder Builder, ulong LogNumber, string Comparator)>
        {
            [ColumnFamilyVersions.DefaultId] = (ColumnFamilyVersions.DefaultName, new VersionBuilder(Version.Empty(null)), 0, ""),
        };
        var edits = new List<string>();
        ulong nextFile = 0, lastSequence = 0, prevLog = 0, minLogToKeep = 0;
        uint maxColumnFamily = 0;
        using (ISequentialFile file = LocalFileSystem.Instance.OpenSequential(manifestPath))
        using (var scratch = new ByteBuffer(1024))
        {
            LogReader reader = LogReader.ForManifest(file, manifestPath);
            while (reader.TryReadRecord(scratch, out ReadOnlySpan<byte> record))
            {
                VersionEdit edit = VersionEdit.Decode(record);
                edits.Add(edit.ToString());
                nextFile = edit.HasNextFileNumber ? edit.NextFileNumber : nextFile;
                lastSequence = edit.HasLastSequence ? edit.LastSequence : lastSequence;
                prevLog = edit.HasPrevLogNumber ? edit.PrevLogNumber : prevLog;
                minLogToKeep = edit.HasMinLogNumberToKeep ? Math.Max(minLogToKeep, edit.MinLogNumberToKeep) : minLogToKeep;
                maxColumnFamily = Math.Max(edit.HasMaxColumnFamily ? edit.MaxColumnFamily : 0, Math.Max(maxColumnFamily, edit.ColumnFamily));
                if (edit.ColumnFamilyAdd is string added && edit.ColumnFamily != ColumnFamilyVersions.DefaultId)
                {
                    families[edit.ColumnFamily] = (added, new VersionBuilder(Version.Empty(null)), 0, "");
                }
                if (edit.IsColumnFamilyDrop)
                {
                    families.Remove(edit.ColumnFamily);
                    continue;
                }
                if (!families.TryGetValue(edit.ColumnFamily, out var family))
                {
                    continue; // an edit of a dropped family (a flush that raced the drop)
                }
                family.Builder.Apply(edit);
                families[edit.ColumnFamily] = (family.Name, family.Builder, edit.HasLogNumber ? edit.LogNumber : family.LogNumber,
                    edit.Comparator ?? family.Comparator);
            }
        }
        var result = new List<ManifestColumnFamilyInfo>(families.Count);
        foreach ((uint id, var f) in families)
        {
            Version version = f.Builder.Build(null);
            var levels = new IReadOnlyList<ManifestTableInfo>[Version.NumLevels];
            for (int level = 0; level < Version.NumLevels; level++)
            {
                IReadOnlyList<FileMetaData> files = version.Files(level);
                var tables = new ManifestTableInfo[files.Count];
                for (int i = 0; i < tables.Length; i++)
                {
                    tables[i] = new ManifestTableInfo(files[i]);
                }
                levels[level] = tables;
            }
            result.Add(new ManifestColumnFamilyInfo(id, f.Name, f.LogNumber, f.Comparator, levels));
        }
        return new ManifestInfo(manifestPath, result, edits, nextFile, lastSequence, prevLog, maxColumnFamily, minLogToKeep);
    }
}
