using System.Text;
using KvEngine.Storage;

namespace KvEngine.OptionsFile;

/// <summary>
/// The OPTIONS files of one database directory, handled as RocksDB's DBImpl::WriteOptionsFile
/// and LoadLatestOptions do. Writing: a temp file <c>OPTIONS-T.dbtmp</c> and the final
/// <c>OPTIONS-N</c> each take a new number from the database's file-number counter (N &gt; T, both
/// above every OPTIONS file present), the text is written, synced and read back, renamed, the
/// directory synced, and all but the two newest OPTIONS files (and any stale temp file) deleted.
/// Loading: the OPTIONS file with the highest number. Thread-safety: the caller serializes writes
/// for one directory (RocksDB holds the DB mutex); loading is read-only.
/// </summary>
internal static class OptionsFileStore
{
    /// <summary>OPTIONS files kept after a write (RocksDB's kNumOptionsFilesKept).</summary>
    public const int FilesKept = 2;

    /// <summary>
    /// Writes the database's OPTIONS file and deletes older ones; returns its path.
    /// <paramref name="newFileNumber"/> takes a number from the database's counter;
    /// <paramref name="markFileNumberUsed"/> moves the counter past a number already on disk.
    /// Without <paramref name="deleteObsolete"/> (file deletions disabled) older files stay.
    /// </summary>
    public static string Write(IFileSystem fs, string dir, KvOptions db, IReadOnlyList<(string Name, ColumnFamilyOptions Options)> families,
        Func<ulong> newFileNumber, Action<ulong> markFileNumberUsed, bool deleteObsolete = true)
    {
        ArgumentNullException.ThrowIfNull(fs);
        ArgumentNullException.ThrowIfNull(newFileNumber);
        ArgumentNullException.ThrowIfNull(markFileNumberUsed);
        string text = OptionsFileWriter.Format(db, families);
        ulong newest = 0;
        foreach ((ulong existing, _, _) in List(fs, dir))
        {
            newest = Math.Max(newest, existing);
        }
        if (newest > 0)
        {
            markFileNumberUsed(newest);
        }
        ulong tempNumber = newFileNumber();
        ulong number = newFileNumber();
        string temp = Path.Combine(dir, OptionsFileNames.TempFileName(tempNumber));
        string final = Path.Combine(dir, OptionsFileNames.FileName(number));
        byte[] bytes = Encoding.UTF8.GetBytes(text);
        try
        {
            using (IWritableFile file = fs.CreateWritable(temp))
            {
                file.Append(bytes);
                file.Sync();
            }
            // RocksDB re-parses what it wrote and compares before the rename.
            byte[] back = ReadAll(fs, temp);
            if (!back.AsSpan().SequenceEqual(bytes))
            {
                throw new KvCorruptionException($"{temp}: the OPTIONS file read back differs from what was written.");
            }
            fs.RenameFile(temp, final);
            fs.SyncDirectory(dir);
        }
        catch
        {
            TryDelete(fs, temp);
            throw;
        }
        if (deleteObsolete)
        {
            DeleteObsolete(fs, dir, number);
        }
        return final;
    }

    /// <summary>
    /// <see cref="Write"/> as DB::Open calls it with RocksDB's default fail_if_options_file_error
    /// (false): an I/O failure is logged as a warning through <paramref name="loggerFactory"/> and
    /// the open goes on (the database works without its OPTIONS file). Returns the path, or null.
    /// </summary>
    public static string? TryWrite(IFileSystem fs, string dir, KvOptions db, IReadOnlyList<(string Name, ColumnFamilyOptions Options)> families,
        Func<ulong> newFileNumber, Action<ulong> markFileNumberUsed, Microsoft.Extensions.Logging.ILoggerFactory? loggerFactory,
        bool deleteObsolete = true)
    {
        try
        {
            return Write(fs, dir, db, families, newFileNumber, markFileNumberUsed, deleteObsolete);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or KvCorruptionException)
        {
            Microsoft.Extensions.Logging.ILogger? logger = loggerFactory?.CreateLogger(KvEngineDiagnostics.LoggerCategory);
            if (logger != null)
            {
                Microsoft.Extensions.Logging.LoggerExtensions.LogWarning(logger, e, "Database {Db}: unable to persist options to an OPTIONS file", dir);
            }
            return null;
        }
    }

    /// <summary>Parses the newest OPTIONS file of <paramref name="dir"/>.</summary>
    /// <exception cref="KvException">No OPTIONS file (or no directory), or options KvEngine cannot honour.</exception>
    /// <exception cref="KvCorruptionException">The file is malformed.</exception>
    public static OptionsFileContents LoadLatest(IFileSystem fs, string dir)
    {
        if (!fs.DirectoryExists(dir))
        {
            throw new KvException($"Database directory '{dir}' does not exist.", KvStatusCode.IOError, KvStatusSubCode.PathNotFound, null);
        }
        ulong newest = Newest(fs, dir);
        if (newest == 0)
        {
            throw new KvException($"Database '{dir}' has no OPTIONS file.", KvStatusCode.NotFound, KvStatusSubCode.None, null);
        }
        string path = Path.Combine(dir, OptionsFileNames.FileName(newest));
        string text;
        try
        {
            text = new UTF8Encoding(false, throwOnInvalidBytes: true).GetString(ReadAll(fs, path));
        }
        catch (DecoderFallbackException e)
        {
            throw new KvCorruptionException($"{path}: not UTF-8 text.", e);
        }
        return OptionsFileParser.Parse(text, path);
    }

    /// <summary>The number of the newest OPTIONS file of <paramref name="dir"/> (not a temp file), 0 when none.</summary>
    public static ulong Newest(IFileSystem fs, string dir)
    {
        ulong newest = 0;
        foreach ((ulong number, bool isTemp, _) in List(fs, dir))
        {
            if (!isTemp)
            {
                newest = Math.Max(newest, number);
            }
        }
        return newest;
    }

    /// <summary>
    /// The deletions a write skipped while file deletions were disabled: stale temp files and the
    /// OPTIONS files older than the <see cref="FilesKept"/> newest. The caller serializes it with writes.
    /// </summary>
    public static void DeleteObsolete(IFileSystem fs, string dir) => DeleteObsolete(fs, dir, ulong.MaxValue);

    /// <summary>Deletes stale temp files and every OPTIONS file older than the <see cref="FilesKept"/> newest.</summary>
    private static void DeleteObsolete(IFileSystem fs, string dir, ulong current)
    {
        var finals = new List<ulong>();
        foreach ((ulong number, bool isTemp, string name) in List(fs, dir))
        {
            if (isTemp)
            {
                TryDelete(fs, Path.Combine(dir, name));
            }
            else if (number <= current)
            {
                finals.Add(number);
            }
        }
        finals.Sort();
        for (int i = 0; i < finals.Count - FilesKept; i++)
        {
            TryDelete(fs, Path.Combine(dir, OptionsFileNames.FileName(finals[i])));
        }
    }

    private static List<(ulong Number, bool IsTemp, string Name)> List(IFileSystem fs, string dir)
    {
        var files = new List<(ulong, bool, string)>();
        foreach (string name in fs.GetChildren(dir))
        {
            if (OptionsFileNames.TryParse(name, out ulong number, out bool isTemp))
            {
                files.Add((number, isTemp, name));
            }
        }
        return files;
    }

    private static byte[] ReadAll(IFileSystem fs, string path)
    {
        long size = fs.GetFileSize(path);
        if (size > 64L << 20)
        {
            throw new KvCorruptionException($"{path}: {size} bytes is too large for an OPTIONS file.");
        }
        var buffer = new byte[size];
        using ISequentialFile file = fs.OpenSequential(path);
        int read = 0;
        while (read < buffer.Length)
        {
            int n = file.Read(buffer.AsSpan(read));
            if (n <= 0)
            {
                throw new KvCorruptionException($"{path}: truncated while reading ({read} of {size} bytes).");
            }
            read += n;
        }
        return buffer;
    }

    private static void TryDelete(IFileSystem fs, string path)
    {
        try
        {
            fs.DeleteFile(path);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // RocksDB ignores failures to delete obsolete OPTIONS files; the next write retries.
        }
    }
}
