using System.Globalization;
using System.Text;
using KvEngine.Versions;
using Version = KvEngine.Versions.Version;
using KvEngine.Storage;

namespace KvEngine.Db.Recovery;

/// <summary>
/// What a recovered MANIFEST and the files on disk say about lost edits and damaged tables, found
/// at open before any family is attached or any WAL replayed (RocksDB 7.8 does not look: a
/// truncated MANIFEST there silently resurrects deleted values, loses keys, and its obsolete-file
/// sweep then deletes the tables the lost edits had added). The evidence of lost edits:
/// <list type="bullet">
/// <item>a table or blob file numbered at or above the next file number the MANIFEST records.
/// KvEngine records a table's number before creating the table
/// (<see cref="VersionSet.RecordFileNumber"/>), so such a file was created after the MANIFEST's
/// last surviving record: the records that followed are gone. This holds for a column family the
/// MANIFEST forgot: its tables were made after the record that created it;</item>
/// <item>a WAL the MANIFEST tracks as live (at or above its log number; see
/// <see cref="WalTracker"/>) is missing: only a later edit may make a WAL obsolete, so that edit,
/// and the flush it recorded, were lost;</item>
/// <item>with best-efforts recovery, a MANIFEST record that could not be read.</item>
/// </list>
/// A WAL is never evidence by its number: every WAL at or above the recovered log number is
/// replayed, so none is lost with the edits. Separately from lost edits: a table the version names
/// that is missing (always checked), or that has another size than recorded (ParanoidChecks or
/// best-efforts recovery: RocksDB's CheckConsistency), is a damaged table, not a damaged MANIFEST.
/// A table the version does not name and that is numbered below the recorded next file number is
/// what the MANIFEST retired (an edit deleted it, or its family was dropped) or an output whose
/// edit a crash cut off (its number was recorded before it was made): the open's sweep deletes
/// those when nothing else is wrong. Immutable once built.
/// </summary>
internal sealed class RecoveryDamage
{
    private RecoveryDamage(string manifestName, ulong recordedNextFile)
    {
        ManifestName = manifestName;
        RecordedNextFileNumber = recordedNextFile;
    }

    public string ManifestName { get; }

    public ulong RecordedNextFileNumber { get; }

    /// <summary>Why the MANIFEST could not be read to its end (best-efforts recovery only), or null.</summary>
    public string? ManifestDamage { get; private init; }

    /// <summary>Tracked live WALs that are not on disk.</summary>
    public IReadOnlyList<ulong> MissingWals { get; private init; } = [];

    /// <summary>Table and blob file names at or above the recorded next file number, ascending.</summary>
    public IReadOnlyList<string> NewerFiles { get; private init; } = [];

    /// <summary>Tables of the version that are missing or have another size, with their level and what is wrong.</summary>
    public IReadOnlyList<(int Level, FileMetaData File, string Problem)> BadTables { get; private init; } = [];

    /// <summary>How many of <see cref="BadTables"/> are missing (the rest have another size).</summary>
    public int MissingTableCount { get; private init; }

    /// <summary>Table files on disk that the version does not name and the MANIFEST did not retire, ascending.</summary>
    public IReadOnlyList<ulong> UnnamedTables { get; private init; } = [];

    /// <summary>
    /// True when edits are proven lost: the MANIFEST is damaged or truncated, a file numbered past
    /// its records exists, a WAL it names as live is gone, or a table it names is gone while tables
    /// it does not name are present (the outputs of the lost edit that retired it).
    /// </summary>
    public bool EditsLost => ManifestDamage != null || MissingWals.Count > 0 || NewerFiles.Count > 0 ||
        (MissingTableCount > 0 && UnnamedTables.Count > 0);

    /// <summary>True when the open cannot go on as is: lost edits or a missing or damaged table.</summary>
    public bool Found => EditsLost || BadTables.Count > 0;

    /// <summary>
    /// Looks for the evidence. <paramref name="listedBeforeRecovery"/>: the directory's file names,
    /// listed before the MANIFEST was read (a writer beside a read-only open may add tables after
    /// the read, never before it without recording them first). <paramref name="checkTables"/>
    /// checks every named table's size, <paramref name="checkMissing"/> its existence.
    /// </summary>
    public static RecoveryDamage Find(IFileSystem fs, string dir, VersionSet versions, IReadOnlyList<string> listedBeforeRecovery,
        bool checkTables, bool checkMissing)
    {
        var tables = new HashSet<ulong>();
        var wals = new HashSet<ulong>();
        foreach (string name in fs.GetChildren(dir))
        {
            if (FileNames.TryParse(name, out DbFileType type, out ulong number))
            {
                if (type == DbFileType.Table)
                {
                    tables.Add(number);
                }
                else if (type == DbFileType.Log)
                {
                    wals.Add(number);
                }
            }
        }

        var missingWals = new List<ulong>();
        foreach (ulong n in versions.TrackedWals)
        {
            if (n >= versions.MinLogNumberToKeep && !wals.Contains(n))
            {
                missingWals.Add(n);
            }
        }

        var bad = new List<(int, FileMetaData, string)>();
        int missingTables = 0;
        var referenced = new HashSet<ulong>();
        foreach (ColumnFamilyVersions family in versions.Families)
        {
            Version v = family.Current;
            for (int level = 0; level < Version.NumLevels; level++)
            {
                foreach (FileMetaData f in v.Files(level))
                {
                    referenced.Add(f.Number);
                    string path = FileNames.TableFile(dir, f.Number);
                    if (!tables.Contains(f.Number))
                    {
                        if (checkMissing || checkTables)
                        {
                            bad.Add((level, f, $"{Path.GetFileName(path)} (column family '{family.Name}', level {level}) is missing."));
                            missingTables++;
                        }
                        continue;
                    }
                    if (!checkTables)
                    {
                        continue;
                    }
                    long size = fs.GetFileSize(path);
                    if ((ulong)size != f.FileSize)
                    {
                        bad.Add((level, f, $"{Path.GetFileName(path)} (column family '{family.Name}', level {level}) has {size} bytes; {FileNames.ManifestName(versions.ManifestFileNumber)} records {f.FileSize}."));
                    }
                }
            }
        }

        var newer = new List<(ulong Number, string Name)>();
        foreach (string name in listedBeforeRecovery)
        {
            ulong number;
            bool dataFile = FileNames.TryParse(name, out DbFileType type, out number) ? type == DbFileType.Table : IsBlobFile(name, out number);
            if (dataFile && number >= versions.RecordedNextFileNumber && !referenced.Contains(number))
            {
                newer.Add((number, name));
            }
        }
        newer.Sort();

        var unnamed = new List<ulong>();
        foreach (ulong n in tables)
        {
            if (!referenced.Contains(n) && !versions.RetiredTables.Contains(n))
            {
                unnamed.Add(n);
            }
        }
        unnamed.Sort();
        return new RecoveryDamage(FileNames.ManifestName(versions.ManifestFileNumber), versions.RecordedNextFileNumber)
        {
            ManifestDamage = versions.ManifestDamage,
            MissingWals = missingWals,
            NewerFiles = newer.ConvertAll(static f => f.Name),
            BadTables = bad,
            MissingTableCount = missingTables,
            UnnamedTables = unnamed,
        };
    }

    /// <summary>
    /// The corruption message: every piece of evidence, naming the damaged files, and what each
    /// remedy would do. Lost edits: best-efforts recovery rebuilds the state from the tables
    /// present. A missing or damaged table with an intact MANIFEST: the table is the damage; a
    /// backup restores it, best-efforts recovery would open without its keys.
    /// </summary>
    public string Describe(string dir)
    {
        CultureInfo c = CultureInfo.InvariantCulture;
        var sb = new StringBuilder();
        sb.Append(c, $"Database '{dir}': ");
        if (EditsLost)
        {
            sb.Append(c, $"{ManifestName} has lost edits.");
            if (ManifestDamage != null)
            {
                sb.Append(c, $" It is damaged: {ManifestDamage}");
            }
            if (NewerFiles.Count > 0)
            {
                sb.Append(c, $" File(s) {string.Join(", ", NewerFiles)} are numbered at or above its next file number {RecordedNextFileNumber}: they were made after its last record, so the records that added them are gone (a truncated or damaged MANIFEST).");
            }
            if (MissingWals.Count > 0)
            {
                sb.Append(c, $" It records WAL(s) {Join(MissingWals, ".log")} as live, but they are gone: the edits that made them obsolete, and the tables those edits added, are not in it (a damaged or truncated MANIFEST, or WALs deleted by hand).");
            }
            if (MissingTableCount > 0)
            {
                sb.Append(" Table(s) it names are gone: the edit that retired them is lost.");
            }
            foreach ((int _, FileMetaData _, string problem) in BadTables)
            {
                sb.Append(' ').Append(problem);
            }
            sb.Append(" Opening this MANIFEST's state would bring back deleted values and lose keys; nothing was changed or deleted.");
            sb.Append(c, $" KvOptions.BestEffortsRecovery = true rebuilds the database from the files present: it adopts the {UnnamedTables.Count} table(s) the MANIFEST does not name");
            sb.Append(BadTables.Count > 0 ? " and opens without the missing or damaged ones (keys only they held are lost)." : ".");
            return sb.ToString();
        }

        // The MANIFEST accounts for every file: the tables themselves are the damage.
        sb.Append(BadTables.Count == 1 ? "a table file is damaged:" : "table files are damaged:");
        foreach ((int _, FileMetaData _, string problem) in BadTables)
        {
            sb.Append(' ').Append(problem);
        }
        sb.Append(c, $" {ManifestName} is intact as far as the files show (the table was deleted, truncated or overwritten outside KvEngine, or lost by the file system).");
        sb.Append(" Restore the file from a backup to keep its keys; KvOptions.BestEffortsRecovery = true would open without it (moved to lost/ if present), and the keys only it held would be gone.");
        return sb.ToString();
    }

    /// <summary>A RocksDB blob file name (NNNNNN.blob), which KvEngine never writes.</summary>
    private static bool IsBlobFile(string name, out ulong number)
    {
        number = 0;
        return name.EndsWith(".blob", StringComparison.Ordinal) &&
            ulong.TryParse(name.AsSpan(0, name.Length - 5), NumberStyles.None, CultureInfo.InvariantCulture, out number);
    }

    private static string Join(IReadOnlyList<ulong> numbers, string suffix)
    {
        var sb = new StringBuilder();
        for (int i = 0; i < numbers.Count; i++)
        {
            if (i > 0)
            {
                sb.Append(", ");
            }
            sb.Append(numbers[i].ToString("D6", CultureInfo.InvariantCulture)).Append(suffix);
        }
        return sb.ToString();
    }
}
