using System.Globalization;

namespace KvEngine.Tool.Commands;

/// <summary>
/// <c>kvtool manifest_dump</c>, ldb's: the state the current MANIFEST (or --path=FILE) adds up to,
/// per column family its log number, comparator and each level's tables as
/// <c> NUMBER:SIZE[SMALLEST_SEQ .. LARGEST_SEQ]['KEY' seq:N, type:T .. 'KEY' seq:N, type:T]</c>
/// (keys hex with --hex), then the database-wide counters; --verbose prints every edit first.
/// Matches ldb's lines, except that ldb lists 64 levels (its num_levels) and kvtool KvEngine's 7.
/// </summary>
internal static class ManifestDumpCommand
{
    public static int Run(ToolContext context, ToolArgs args)
    {
        args.Allow("manifest_dump", "db", "path", "hex", "verbose");
        args.Parameters(1, 0, "manifest_dump --db=PATH [--path=MANIFEST-FILE] [--hex] [--verbose]");
        string? path = args.Get("path");
        ManifestInfo manifest = path != null ? ManifestInfo.ReadFile(path) : ManifestInfo.Read(args.Require("db", "manifest_dump"));
        bool hex = args.Has("hex");
        bool verbose = args.Has("verbose");
        if (context.Json)
        {
            WriteJson(context, manifest, verbose);
            return ExitCodes.Ok;
        }
        if (verbose)
        {
            context.WriteLine($"Processing Manifest file {manifest.ManifestPath}");
            foreach (string edit in manifest.Edits)
            {
                context.WriteLine(edit);
            }
        }
        // ldb's "version#": RocksDB's version counter after its recovery, which creates one version
        // per family while reading and one more per family at the end (family i: count + i).
        int versionNumber = manifest.ColumnFamilies.Count;
        foreach (ManifestColumnFamilyInfo family in manifest.ColumnFamilies)
        {
            context.WriteLine(string.Create(CultureInfo.InvariantCulture, $"--------------- Column family \"{family.Name}\"  (ID {family.Id}) --------------"));
            context.WriteLine(string.Create(CultureInfo.InvariantCulture, $"log number: {family.LogNumber}"));
            context.WriteLine($"comparator: {family.ComparatorName}");
            for (int level = 0; level < family.Levels.Count; level++)
            {
                context.WriteLine(string.Create(CultureInfo.InvariantCulture, $"--- level {level} --- version# {versionNumber} ---"));
                foreach (ManifestTableInfo t in family.Levels[level])
                {
                    context.Write(string.Create(CultureInfo.InvariantCulture, $" {t.FileNumber}:{t.FileSize}[{t.SmallestSequence} .. {t.LargestSequence}]['"));
                    context.WriteBytes(t.SmallestKey.Span, hex, prefix: false);
                    context.Write(string.Create(CultureInfo.InvariantCulture, $"' seq:{t.SmallestKeySequence}, type:{(int)t.SmallestKeyType} .. '"));
                    context.WriteBytes(t.LargestKey.Span, hex, prefix: false);
                    context.Write(string.Create(CultureInfo.InvariantCulture, $"' seq:{t.LargestKeySequence}, type:{(int)t.LargestKeyType}]"));
                    if (t.OldestBlobFileNumber != 0)
                    {
                        context.Write(string.Create(CultureInfo.InvariantCulture, $" blob_file:{t.OldestBlobFileNumber}"));
                    }
                    context.WriteLine();
                }
            }
            versionNumber++;
        }
        // ldb prints the value its recovery sets, one past the recorded one (VersionEditHandler).
        context.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"next_file_number {manifest.NextFileNumber + 1} last_sequence {manifest.LastSequence}  prev_log_number {manifest.PrevLogNumber} max_column_family {manifest.MaxColumnFamily} min_log_number_to_keep {manifest.MinLogNumberToKeep}"));
        if (verbose)
        {
            context.WriteLine($"Processing Manifest file {manifest.ManifestPath} done");
        }
        return ExitCodes.Ok;
    }

    private static void WriteJson(ToolContext context, ManifestInfo manifest, bool verbose) =>
        context.WriteJson(w =>
        {
            w.WriteString("manifest", manifest.ManifestPath);
            w.WriteNumber("next_file_number", manifest.NextFileNumber);
            w.WriteNumber("last_sequence", manifest.LastSequence);
            w.WriteNumber("prev_log_number", manifest.PrevLogNumber);
            w.WriteNumber("max_column_family", manifest.MaxColumnFamily);
            w.WriteNumber("min_log_number_to_keep", manifest.MinLogNumberToKeep);
            w.WriteStartArray("column_families");
            foreach (ManifestColumnFamilyInfo family in manifest.ColumnFamilies)
            {
                w.WriteStartObject();
                w.WriteNumber("id", family.Id);
                w.WriteString("name", family.Name);
                w.WriteNumber("log_number", family.LogNumber);
                w.WriteString("comparator", family.ComparatorName);
                w.WriteStartArray("levels");
                for (int level = 0; level < family.Levels.Count; level++)
                {
                    w.WriteStartArray();
                    foreach (ManifestTableInfo t in family.Levels[level])
                    {
                        w.WriteStartObject();
                        w.WriteNumber("file_number", t.FileNumber);
                        w.WriteNumber("file_size", t.FileSize);
                        w.WriteNumber("smallest_seqno", t.SmallestSequence);
                        w.WriteNumber("largest_seqno", t.LargestSequence);
                        w.WriteString("smallest_key", ToolContext.Hex(t.SmallestKey.Span));
                        w.WriteString("largest_key", ToolContext.Hex(t.LargestKey.Span));
                        w.WriteEndObject();
                    }
                    w.WriteEndArray();
                }
                w.WriteEndArray();
                w.WriteEndObject();
            }
            w.WriteEndArray();
            if (verbose)
            {
                w.WriteStartArray("edits");
                foreach (string edit in manifest.Edits)
                {
                    w.WriteStringValue(edit);
                }
                w.WriteEndArray();
            }
        });
}
