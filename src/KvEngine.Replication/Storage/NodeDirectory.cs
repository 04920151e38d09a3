using System.Globalization;
using System.Text;

namespace KvEngine.Replication.Storage;

// <root>/CURRENT_DB             the live database's directory name + "\n" (replaced atomically)
// <root>/db-<generation:D20>/   a KvEngine database; only the one CURRENT_DB names is live
// <root>/snapshots/             checkpoints (Snapshots/SnapshotStore)
// <root>/wal/                   DotNext's write-ahead log (when ReplicatedKvNode lays it out)

/// <summary>
/// The directory layout of one replicated node and the atomic switch of its live database: a new
/// database is built in a new <c>db-N</c> directory, then <c>CURRENT_DB</c> is replaced by
/// write-temp, fsync, rename, fsync of the directory; the old directory is deleted after (or on the next open).
/// Not thread-safe: the state machine calls it from open and from the applier only.
/// </summary>
internal sealed class NodeDirectory
{
    private const string PointerName = "CURRENT_DB";
    private const string DbPrefix = "db-";

    public NodeDirectory(string root)
    {
        Root = Path.GetFullPath(root);
        Directory.CreateDirectory(Root);
        string pointer = Path.Combine(Root, PointerName);
        if (File.Exists(pointer))
        {
            string name = File.ReadAllText(pointer, Encoding.UTF8).TrimEnd('\n');
            if (!TryParseGeneration(name, out long generation))
            {
                throw new KvCorruptionException($"'{pointer}' does not name a database directory ('{name}').");
            }
            Generation = generation;
        }
        else
        {
            Generation = 1;
            Directory.CreateDirectory(DatabasePath);
            WritePointer();
        }
        DeleteStaleDatabases();
    }

    /// <summary>The node's root directory (absolute).</summary>
    public string Root { get; }

    /// <summary>The live database's generation (the N of <c>db-N</c>).</summary>
    public long Generation { get; private set; }

    /// <summary>The live database's directory.</summary>
    public string DatabasePath => PathOf(Generation);

    /// <summary>The snapshots' directory.</summary>
    public string SnapshotsPath => Path.Combine(Root, "snapshots");

    /// <summary>The directory the next database is built in (a snapshot being installed).</summary>
    public string NextDatabasePath => PathOf(Generation + 1);

    /// <summary>Creates <see cref="NextDatabasePath"/> empty (deleting what a failed attempt left there).</summary>
    public string CreateNext()
    {
        string target = NextDatabasePath;
        if (Directory.Exists(target))
        {
            Directory.Delete(target, recursive: true);
        }
        Directory.CreateDirectory(target);
        return target;
    }

    /// <summary>
    /// Fills a new <see cref="NextDatabasePath"/> with a copy of the checkpoint in
    /// <paramref name="checkpoint"/> (every file copied and synced: an open database rewrites its
    /// MANIFEST and WALs, and the checkpoint must stay as it is). Used only to recover a database
    /// that is behind its own newest snapshot.
    /// </summary>
    public string CopyFromCheckpoint(string checkpoint)
    {
        string target = CreateNext();
        foreach (string source in Directory.EnumerateFiles(checkpoint))
        {
            string destination = Path.Combine(target, Path.GetFileName(source));
            File.Copy(source, destination);
            using var stream = new FileStream(destination, FileMode.Open, FileAccess.ReadWrite);
            stream.Flush(flushToDisk: true);
        }
        return target;
    }

    /// <summary>
    /// Makes <see cref="NextDatabasePath"/> the live database (the database in it must be closed
    /// or already open by the caller), then deletes the previous one.
    /// </summary>
    public void SwitchToNext()
    {
        string previous = DatabasePath;
        Generation++;
        WritePointer();
        if (Directory.Exists(previous))
        {
            Directory.Delete(previous, recursive: true);
        }
    }

    private void WritePointer()
    {
        string pointer = Path.Combine(Root, PointerName);
        string temp = pointer + ".tmp";
        using (var stream = new FileStream(temp, FileMode.Create, FileAccess.Write, FileShare.None))
        {
            stream.Write(Encoding.UTF8.GetBytes(Path.GetFileName(DatabasePath) + "\n"));
            stream.Flush(flushToDisk: true);
        }
        File.Move(temp, pointer, overwrite: true);
        // The rename itself survives a power loss only once the directory is synced.
        DirectorySync.Sync(Root);
    }

    private void DeleteStaleDatabases()
    {
        foreach (string path in Directory.EnumerateDirectories(Root, DbPrefix + "*"))
        {
            if (TryParseGeneration(Path.GetFileName(path), out long generation) && generation != Generation)
            {
                Directory.Delete(path, recursive: true);
            }
        }
    }

    private string PathOf(long generation) =>
        Path.Combine(Root, string.Create(CultureInfo.InvariantCulture, $"{DbPrefix}{generation:D20}"));

    private static bool TryParseGeneration(string name, out long generation)
    {
        generation = 0;
        return name.StartsWith(DbPrefix, StringComparison.Ordinal)
            && long.TryParse(name.AsSpan(DbPrefix.Length), NumberStyles.None, CultureInfo.InvariantCulture, out generation)
            && generation > 0;
    }
}
