using System.Globalization;
using System.Text;
using KvEngine.Versions;
using Version = KvEngine.Versions.Version;
using KvEngine.Storage;

namespace KvEngine.Db.Recovery;

/// <summary>
/// What a recovered MANIFEST and the files on disk say about lost edits, found at open before any
/// WAL is replayed (RocksDB 7.8 does not look: a truncated MANIFEST there silently resurrects
/// deleted values and loses keys). The evidence:
/// <list type="bullet">
/// <item>a WAL the MANIFEST tracks as live (at or above its log number; see
/// <see cref="WalTracker"/>) is missing: only a later edit may make a WAL obsolete, so that edit,
/// and the flush it recorded, were lost;</item>
/// <item>a table the version names is missing or has another size (checked with ParanoidChecks or
/// best-efforts recovery: RocksDB's CheckConsistency);</item>
/// <item>with best-efforts recovery, a MANIFEST record that could not be read.</item>
/// </list>
/// With that evidence, the tables on disk that the version does not name hold what the lost edits
/// recorded (or are leftovers that a recorded edit made obsolete: which, nothing says); without
/// it, they are only such leftovers or the outputs of a flush or compaction cut short by a crash.
/// Immutable once built.
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

    /// <summary>Tables of the version that are missing or have another size, with their level and what is wrong.</summary>
    public IReadOnlyList<(int Level, FileMetaData File, string Problem)> BadTables { get; private init; } = [];

    /// <summary>Table files on disk that the version does not name, ascending.</summary>
    public IReadOnlyList<ulong> UnnamedTables { get; private init; } = [];

    /// <summary>
    /// True when edits are proven lost: the MANIFEST is damaged or truncated, or a file it names
    /// as live (a WAL at or above the log number, a table) is gone. KvEngine deletes either only
    /// after a synced edit stopped naming it, so a missing one means that edit was lost (or the
    /// file was deleted by hand).
    /// </summary>
    public bool EditsLost => ManifestDamage != null || MissingWals.Count > 0 || BadTables.Count > 0;

    /// <summary>Looks for the evidence; <paramref name="checkTables"/> checks every table's existence and size.</summary>
    public static RecoveryDamage Find(IFileSystem fs, string dir, VersionSet versions, bool checkTables)
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
        var referenced = new HashSet<ulong>();
        foreach (ColumnFamilyVersions family in versions.Families)
        {
            Version v = family.Current;
            for (int level = 0; level < Version.NumLevels; level++)
            {
                foreach (FileMetaData f in v.Files(level))
                {
                    referenced.Add(f.Number);
                    if (!checkTables)
                    {
                        continue;
                    }
                    string path = FileNames.TableFile(dir, f.Number);
                    if (!tables.Contains(f.Number))
                    {
                        bad.Add((level, f, $"Table file {path} named by the MANIFEST is missing."));
                        continue;
                    }
                    long size = fs.GetFileSize(path);
                    if ((ulong)size != f.FileSize)
                    {
                        bad.Add((level, f, $"Table file {path} has {size} bytes; the MANIFEST records {f.FileSize}."));
                    }
                }
            }
        }

        var unnamed = new List<ulong>();
        foreach (ulong n in tables)
        {
            if (!referenced.Contains(n))
            {
                unnamed.Add(n);
            }
        }
        unnamed.Sort();
        return new RecoveryDamage(FileNames.ManifestName(versions.ManifestFileNumber), versions.RecordedNextFileNumber)
        {
            ManifestDamage = versions.ManifestDamage,
            MissingWals = missingWals,
            BadTables = bad,
            UnnamedTables = unnamed,
        };
    }

    /// <summary>The corruption message: every piece of evidence, and what to do.</summary>
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
            if (MissingWals.Count > 0)
            {
                sb.Append(c, $" It records WAL(s) {Join(MissingWals, ".log")} as live, but they are gone: the edits that made them obsolete, and the tables those edits added, are not in it (a damaged or truncated MANIFEST, or WALs deleted by hand).");
            }
            if (UnnamedTables.Count > 0)
            {
                sb.Append(c, $" Table file(s) {Join(UnnamedTables, ".sst")} on disk are not in it (its next file number is {RecordedNextFileNumber}: any numbered from there on were made after its last edit).");
            }
            sb.Append(" Opening would bring back deleted values and lose keys (a lost compaction's outputs are among the tables it does not name).");
        }
        foreach ((int _, FileMetaData _, string problem) in BadTables)
        {
            sb.Append(' ').Append(problem);
        }

        sb.Append(" Open with KvOptions.BestEffortsRecovery = true to rebuild the database from the files present.");
        return sb.ToString();
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
