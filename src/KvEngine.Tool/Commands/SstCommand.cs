using System.Globalization;

namespace KvEngine.Tool.Commands;

/// <summary>
/// <c>kvtool sst</c>, sst_dump over one table or every *.sst of a directory (--file):
/// <c>sst scan</c> (--command=scan) prints every stored entry as
/// <c>'KEY' seq:N, type:T => VALUE</c> (hex with --output_hex), <c>sst verify</c>
/// (--command=verify) checks every block's checksum ("The file is ok"), <c>sst check</c>
/// (--command=check, the default) reads every entry without printing, <c>sst properties</c>
/// (--show_properties) prints the properties block, <c>sst dump</c> prints footer, properties,
/// range deletions and entries to stdout and --command=raw writes them to FILE_dump.txt as
/// sst_dump does. Lines match sst_dump's, but for its "options.env is 0x..." line (a pointer).
/// A damaged or foreign file is reported on one stderr line and the other files go on; the exit
/// code is then 3 (corruption) or 1, where sst_dump exits 0 after a failed verify.
/// </summary>
internal static class SstCommand
{
    public static int Run(ToolContext context, ToolArgs args)
    {
        args.Allow("sst", "file", "command", "show_properties", "output_hex", "from", "to", "read_num", "input_key_hex", "verify_checksum");
        string? sub = args.Positionals.Count > 1 ? args.Positionals[1] : null;
        args.Parameters(sub == null ? 1 : 2, 0, "sst scan|verify|check|properties|dump --file=PATH, or sst --file=PATH --command=scan|verify|check|raw|none [--show_properties]");
        string command = args.Get("command") ?? sub switch
        {
            null => "check",
            "properties" => "none",
            "dump" => "dump",
            "scan" or "verify" or "check" or "raw" => sub,
            _ => throw new ToolUsageException($"Unknown sst command '{sub}' (scan, verify, check, properties, dump, raw)."),
        };
        if (command is not ("scan" or "verify" or "check" or "raw" or "dump" or "none"))
        {
            throw new ToolUsageException($"--command={command}: kvtool's sst supports scan, verify, check, raw and none.");
        }
        bool showProperties = args.Has("show_properties") || sub == "properties";
        bool hex = args.Has("output_hex");
        bool keyHexInput = args.Has("input_key_hex");
        byte[]? from = args.Get("from") is { } f ? DbSession.ParseBytes(f, keyHexInput, "--from key") : null;
        byte[]? to = args.Get("to") is { } t ? DbSession.ParseBytes(t, keyHexInput, "--to key") : null;
        long readNum = args.GetInt64("read_num", 0);
        string target = args.Require("file", "sst");
        IReadOnlyList<string> files = ListFiles(target);

        int exitCode = ExitCodes.Ok;
        bool printedRange = false;
        long totalRead = 0;
        var progress = new Progress(context, "sst " + command);
        foreach (string file in files)
        {
            using var reader = new SstFileReader();
            try
            {
                reader.Open(file);
            }
            catch (Exception e) when (e is KvCorruptionException or IOException)
            {
                exitCode = Worse(exitCode, Report(context, file, e));
                continue;
            }
            if (!context.Json)
            {
                context.WriteLine($"Process {file}");
                context.WriteLine("Sst file format: block-based");
                if (!printedRange && command is "check" or "scan")
                {
                    printedRange = true;
                    context.WriteLine($"from [{Convert.ToHexString(from ?? [])}] to [{Convert.ToHexString(to ?? [])}]");
                }
            }
            try
            {
                switch (command)
                {
                    case "scan":
                    case "check":
                        totalRead += Scan(context, reader, command == "scan", hex, from, to, readNum > 0 ? readNum - totalRead : 0,
                            verify: args.Has("verify_checksum") || command == "scan", progress);
                        break;
                    case "verify":
                        reader.VerifyChecksum();
                        if (context.Json)
                        {
                            context.WriteJson(w =>
                            {
                                w.WriteString("file", file);
                                w.WriteString("status", "ok");
                            });
                        }
                        else
                        {
                            context.WriteLine("The file is ok");
                        }
                        break;
                    case "raw":
                        string output = file[..^4] + "_dump.txt";
                        using (var stream = new FileStream(output, FileMode.Create, FileAccess.Write))
                        {
                            var fileContext = new ToolContext(stream, context.Error, json: false, progress: false);
                            RawDump.Write(fileContext, reader, hex: true);
                        }
                        context.WriteLine($"raw dump written to file {output}");
                        break;
                    case "dump":
                        RawDump.Write(context, reader, hex);
                        break;
                }
                if (showProperties)
                {
                    KvTableProperties properties = reader.GetTableProperties();
                    if (context.Json)
                    {
                        context.WriteJson(w =>
                        {
                            w.WriteString("file", file);
                            TablePropertiesText.WriteJson(w, properties);
                        });
                    }
                    else
                    {
                        context.Write(TablePropertiesText.Format(properties));
                    }
                }
            }
            catch (Exception e) when (e is KvCorruptionException or IOException)
            {
                exitCode = Worse(exitCode, Report(context, file, e));
            }
            if (readNum > 0 && totalRead >= readNum)
            {
                break;
            }
        }
        progress.Finish();
        return exitCode;
    }

    private static long Scan(ToolContext context, SstFileReader reader, bool print, bool hex, byte[]? from, byte[]? to, long limit,
        bool verify, Progress progress)
    {
        long read = 0;
        using SstFileIterator it = reader.NewIterator(new ReadOptions { VerifyChecksums = verify });
        if (from != null)
        {
            it.Seek(from);
        }
        else
        {
            it.SeekToFirst();
        }
        for (; it.Valid; it.Next())
        {
            if (limit > 0 && read >= limit)
            {
                break;
            }
            ReadOnlySpan<byte> key = it.Key;
            if (to != null && key.SequenceCompareTo(to) >= 0)
            {
                break;
            }
            read++;
            progress.Tick(key.Length + it.Value.Length);
            if (!print)
            {
                continue;
            }
            if (context.Json)
            {
                string k = ToolContext.Hex(key);
                string v = ToolContext.Hex(it.Value);
                ulong seq = it.Sequence;
                SstEntryType type = it.EntryType;
                string file = reader.FilePath!;
                context.WriteJson(w =>
                {
                    w.WriteString("file", file);
                    w.WriteString("key", k);
                    w.WriteNumber("sequence", seq);
                    w.WriteNumber("type", (int)type);
                    w.WriteString("type_name", type.ToString());
                    w.WriteString("value", v);
                });
            }
            else
            {
                WriteEntry(context, key, it.Sequence, (int)it.EntryType, it.Value, hex);
            }
        }
        return read;
    }

    /// <summary>One entry as sst_dump prints it: <c>'KEY' seq:N, type:T => VALUE</c> (RocksDB's ParsedInternalKey::DebugString).</summary>
    public static void WriteEntry(ToolContext context, ReadOnlySpan<byte> key, ulong sequence, int type, ReadOnlySpan<byte> value, bool hex)
    {
        context.Write("'"u8);
        WriteRaw(context, key, hex);
        context.Write(string.Create(CultureInfo.InvariantCulture, $"' seq:{sequence}, type:{type} => "));
        WriteRaw(context, value, hex);
        context.WriteLine();
    }

    // Slice::ToString(hex): upper-case hex without 0x, or the bytes.
    private static void WriteRaw(ToolContext context, ReadOnlySpan<byte> bytes, bool hex)
    {
        if (hex)
        {
            context.Write(Convert.ToHexString(bytes));
        }
        else
        {
            context.Write(bytes);
        }
    }

    private static IReadOnlyList<string> ListFiles(string target)
    {
        if (Directory.Exists(target))
        {
            string[] tables = Directory.GetFiles(target, "*.sst");
            Array.Sort(tables, StringComparer.Ordinal);
            if (tables.Length == 0)
            {
                throw new ToolFailureException($"No valid SST files found in {target}");
            }
            return tables;
        }
        if (!File.Exists(target))
        {
            throw new ToolFailureException($"IO error: {target}: No such file or directory");
        }
        return [target];
    }

    private static int Report(ToolContext context, string file, Exception e)
    {
        bool corrupt = e is KvCorruptionException;
        string message = e.Message.ReplaceLineEndings(" ").Trim();
        // KvEngine's messages usually name the file already.
        string named = message.Contains(file, StringComparison.Ordinal) ? message : $"{file}: {message}";
        context.Out.Flush();
        context.Error.WriteLine($"kvtool: {(corrupt ? "Corruption" : "IO error")}: {named}");
        return corrupt ? ExitCodes.Corruption : ExitCodes.Failed;
    }

    private static int Worse(int a, int b) => Math.Max(a, b);
}
