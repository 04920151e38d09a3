using System.Buffers;
using System.Globalization;
using System.Numerics;

namespace KvEngine.Tool.Commands;

/// <summary>
/// <c>kvtool backup verify --backup_dir=DIR [--backup_id=N]</c>: checks backups in RocksDB's
/// BackupEngine layout (what <c>ldb backup</c> and BackupEngine::CreateNewBackup write:
/// <c>meta/ID</c> listing every file of backup ID with its CRC32C, files under <c>private/ID/</c>,
/// <c>shared/</c> and <c>shared_checksum/</c>) as BackupEngine::VerifyBackup(id, true) does: each
/// listed file exists, has the size the meta file records (schema 2), and its CRC32C matches. Meta
/// files of schema 1 and 2 are read; an unknown non-ignorable field (<c>ni::</c>) is refused as
/// RocksDB refuses it. Prints one line per backup (or one JSON object with --json) and fails with
/// the corruption exit code when any file is missing or damaged. Stateless.
/// </summary>
internal static class BackupCommand
{
    private const string SchemaVersionPrefix = "schema_version ";
    private const string FooterMarker = "// FOOTER";

    public static int Run(ToolContext context, ToolArgs args)
    {
        string? sub = args.Positionals.Count > 1 ? args.Positionals[1] : null;
        args.Parameters(2, 0, "backup verify --backup_dir=DIR [--backup_id=N]");
        if (sub != "verify")
        {
            throw new ToolUsageException($"Unknown backup command '{sub}' (verify).");
        }
        args.Allow("backup verify", "backup_dir", "backup_id");
        string dir = args.Require("backup_dir", "backup verify");
        string metaDir = Path.Combine(dir, "meta");
        if (!Directory.Exists(metaDir))
        {
            throw new ToolFailureException($"IO error: {dir} is not a backup directory (no meta directory).");
        }
        long onlyId = args.GetInt64("backup_id", -1);
        var ids = new List<uint>();
        foreach (string file in Directory.EnumerateFiles(metaDir))
        {
            // Meta files are named by their decimal id; ".tmp" files are backups being written.
            if (uint.TryParse(Path.GetFileName(file), NumberStyles.None, CultureInfo.InvariantCulture, out uint id) && (onlyId < 0 || id == onlyId))
            {
                ids.Add(id);
            }
        }
        ids.Sort();
        if (onlyId >= 0 && ids.Count == 0)
        {
            throw new ToolFailureException($"NotFound: backup {onlyId} is not in {dir}.");
        }
        int failed = 0;
        foreach (uint id in ids)
        {
            BackupReport report = Verify(dir, id);
            failed += report.Problems.Count > 0 ? 1 : 0;
            Print(context, report);
        }
        if (failed > 0)
        {
            throw new KvCorruptionException($"{failed} of {ids.Count} backup(s) in {dir} failed verification.");
        }
        return ExitCodes.Ok;
    }

    private static void Print(ToolContext context, BackupReport r)
    {
        if (context.Json)
        {
            context.WriteJson(w =>
            {
                w.WriteNumber("backup_id", r.Id);
                w.WriteNumber("timestamp", r.Timestamp);
                w.WriteNumber("sequence", r.Sequence);
                w.WriteNumber("files", r.Files);
                w.WriteNumber("bytes", r.Bytes);
                w.WriteBoolean("ok", r.Problems.Count == 0);
                w.WriteStartArray("problems");
                foreach (string p in r.Problems)
                {
                    w.WriteStringValue(p);
                }
                w.WriteEndArray();
            });
            return;
        }
        string head = string.Create(CultureInfo.InvariantCulture,
            $"backup {r.Id}: timestamp {r.Timestamp}, sequence {r.Sequence}, {r.Files} files, {r.Bytes} bytes: ");
        if (r.Problems.Count == 0)
        {
            context.WriteLine(head + "OK");
            return;
        }
        context.WriteLine(head + "FAILED");
        foreach (string p in r.Problems)
        {
            context.WriteLine("  " + p);
        }
    }

    /// <summary>Reads meta/<paramref name="id"/> and checks every file it lists.</summary>
    private static BackupReport Verify(string dir, uint id)
    {
        string metaName = Path.Combine("meta", id.ToString(CultureInfo.InvariantCulture));
        var report = new BackupReport { Id = id };
        var lines = new Queue<string>(File.ReadAllLines(Path.Combine(dir, metaName)));
        int schema = 1;
        if (lines.TryPeek(out string? first) && first.StartsWith(SchemaVersionPrefix, StringComparison.Ordinal))
        {
            string version = first[SchemaVersionPrefix.Length..];
            if (version != "2" && !version.StartsWith("2.", StringComparison.Ordinal))
            {
                throw new KvNotSupportedException($"{metaName}: unsupported backup meta schema version {version}.");
            }
            schema = 2;
            lines.Dequeue();
        }
        report.Timestamp = ReadNumber(lines, metaName, "timestamp");
        report.Sequence = ReadNumber(lines, metaName, "sequence number");
        long count = -1;
        while (lines.TryDequeue(out string? line))
        {
            if (line.Length > 0 && char.IsAsciiDigit(line[0]))
            {
                count = ParseNumber(line, metaName, "file count");
                break;
            }
            // A meta field: app metadata in any schema, others (ignorable unless ni::) in schema 2.
            string field = line.Split(' ', 2)[0];
            if (line.Length == 0 || (schema < 2 && field != "metadata") || field.StartsWith("ni::", StringComparison.Ordinal))
            {
                throw new KvCorruptionException($"{metaName}: expected the number of files, found '{line}'.");
            }
        }
        if (count < 0)
        {
            throw new KvCorruptionException($"{metaName}: the number of files is missing.");
        }
        long listed = 0;
        while (lines.TryDequeue(out string? line))
        {
            if (schema >= 2 && line == FooterMarker)
            {
                break;
            }
            listed++;
            VerifyFile(dir, metaName, line, schema, report);
        }
        if (listed != count)
        {
            report.Problems.Add($"{metaName} lists {listed} files but says {count}.");
        }
        return report;
    }

    private static void VerifyFile(string dir, string metaName, string line, int schema, BackupReport report)
    {
        string[] parts = line.Split(' ');
        string name = parts[0];
        if (parts.Length % 2 != 1 || (schema == 1 && (parts.Length != 3 || parts[1] != "crc32")))
        {
            throw new KvCorruptionException($"{metaName}: malformed file entry '{line}'.");
        }
        uint? crc = null;
        long? size = null;
        for (int i = 1; i < parts.Length; i += 2)
        {
            switch (parts[i])
            {
                case "crc32":
                    crc = (uint)ParseNumber(parts[i + 1], metaName, "crc32 of " + name);
                    break;
                case "size":
                    size = ParseNumber(parts[i + 1], metaName, "size of " + name);
                    break;
                case "ni::excluded" when parts[i + 1] == "true":
                    return; // kept in another backup directory (RocksDB's exclude_files_callback)
                default:
                    if (parts[i].StartsWith("ni::", StringComparison.Ordinal) && parts[i] != "ni::excluded")
                    {
                        throw new KvNotSupportedException($"{metaName}: unknown non-ignorable field {parts[i]} for {name}.");
                    }
                    break;
            }
        }
        if (name.Contains("..", StringComparison.Ordinal) || Path.IsPathRooted(name))
        {
            throw new KvCorruptionException($"{metaName}: file name '{name}' leaves the backup directory.");
        }
        report.Files++;
        var info = new FileInfo(Path.Combine(dir, name));
        if (!info.Exists)
        {
            report.Problems.Add($"{name}: missing.");
            return;
        }
        report.Bytes += info.Length;
        if (size is { } expected && expected != info.Length)
        {
            report.Problems.Add($"{name}: size {info.Length}, the meta file records {expected}.");
            return;
        }
        if (crc is { } stored)
        {
            uint actual = Crc32C(info.FullName);
            if (actual != stored)
            {
                report.Problems.Add(string.Create(CultureInfo.InvariantCulture, $"{name}: checksum mismatch: stored crc32c {stored}, computed {actual}."));
            }
        }
    }

    private static long ReadNumber(Queue<string> lines, string metaName, string what) =>
        lines.TryDequeue(out string? line) ? ParseNumber(line, metaName, what) : throw new KvCorruptionException($"{metaName}: the {what} is missing.");

    private static long ParseNumber(string text, string metaName, string what) =>
        long.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out long value) && value >= 0
            ? value
            : throw new KvCorruptionException($"{metaName}: the {what} '{text}' is not a number.");

    /// <summary>CRC32C (Castagnoli) of a whole file, as RocksDB's crc32c::Value computes it.</summary>
    internal static uint Crc32C(string path)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(1 << 20);
        try
        {
            using var stream = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.Read, 1, FileOptions.SequentialScan);
            uint crc = ~0u;
            int n;
            while ((n = stream.Read(buffer, 0, buffer.Length)) > 0)
            {
                crc = Extend(crc, buffer.AsSpan(0, n));
            }
            return ~crc;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    private static uint Extend(uint crc, ReadOnlySpan<byte> data)
    {
        while (data.Length >= 8)
        {
            crc = BitOperations.Crc32C(crc, System.Buffers.Binary.BinaryPrimitives.ReadUInt64LittleEndian(data));
            data = data[8..];
        }
        foreach (byte b in data)
        {
            crc = BitOperations.Crc32C(crc, b);
        }
        return crc;
    }

    private sealed class BackupReport
    {
        public uint Id { get; init; }

        public long Timestamp { get; set; }

        public long Sequence { get; set; }

        public long Files { get; set; }

        public long Bytes { get; set; }

        public List<string> Problems { get; } = [];
    }
}
