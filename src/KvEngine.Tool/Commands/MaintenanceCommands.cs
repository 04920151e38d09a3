using System.Globalization;

namespace KvEngine.Tool.Commands;

/// <summary>
/// ldb's maintenance commands: <c>compact</c> (a manual compaction of --from..--to, the whole
/// key space by default; prints nothing, as ldb), <c>approxsize</c> (the bytes of tables that
/// --from..--to covers, RocksDB's GetApproximateSizes without memtables), <c>checkpoint</c>
/// (--checkpoint_dir: an openable copy, tables hard-linked), <c>repair</c> (KvDb.Repair:
/// rebuilds the MANIFEST from the tables and WALs found) and <c>checkconsistency</c> (every
/// table the MANIFEST lists exists with its recorded size, and the database opens with paranoid
/// checks; read-only, nothing written). Each prints "OK" on success as ldb does (but compact and
/// approxsize).
/// </summary>
internal static class MaintenanceCommands
{
    public static int Compact(ToolContext context, ToolArgs args)
    {
        args.Allow("compact", "db", "from", "to", "hex", "key_hex", "column_family", "ignore_options", "try_load_options");
        args.Parameters(1, 0, "compact --db=PATH [--from=KEY] [--to=KEY] [--hex|--key_hex] [--column_family=NAME]");
        (byte[]? from, byte[]? to) = Range(args, required: false);
        using DbSession session = DbSession.Open(args, "compact", readOnly: false);
        var progress = new Progress(context, "compact");
        progress.Phase("compacting");
        session.Db.CompactRange(session.Family, from, to);
        progress.Phase("done");
        if (context.Json)
        {
            context.WriteJson(w => w.WriteString("status", "OK"));
        }
        return ExitCodes.Ok;
    }

    public static int ApproxSize(ToolContext context, ToolArgs args)
    {
        args.Allow("approxsize", "db", "from", "to", "hex", "key_hex", "column_family", "ignore_options", "try_load_options");
        args.Parameters(1, 0, "approxsize --db=PATH --from=KEY --to=KEY [--hex|--key_hex] [--column_family=NAME]");
        (byte[]? from, byte[]? to) = Range(args, required: true);
        using DbSession session = DbSession.Open(args, "approxsize", readOnly: true);
        long size = session.Db.GetApproximateSizes(session.Family, [new KeyRange(from!, to!)], SizeApproximationFlags.IncludeFiles)[0];
        if (context.Json)
        {
            context.WriteJson(w => w.WriteNumber("size", size));
        }
        else
        {
            context.WriteLine(size.ToString(CultureInfo.InvariantCulture));
        }
        return ExitCodes.Ok;
    }

    public static int Checkpoint(ToolContext context, ToolArgs args)
    {
        args.Allow("checkpoint", "db", "checkpoint_dir", "ignore_options", "try_load_options");
        args.Parameters(1, 0, "checkpoint --db=PATH --checkpoint_dir=DIR");
        string dir = args.Require("checkpoint_dir", "checkpoint");
        using DbSession session = DbSession.Open(args, "checkpoint", readOnly: false);
        session.Db.CreateCheckpoint(dir);
        return context.WriteOk();
    }

    public static int Repair(ToolContext context, ToolArgs args)
    {
        args.Allow("repair", "db", "ignore_options", "try_load_options");
        args.Parameters(1, 0, "repair --db=PATH");
        string path = args.Require("db", "repair");
        if (!Directory.Exists(path))
        {
            throw new ToolFailureException($"IO error: database directory {path} does not exist.");
        }
        KvOptions options = DbSession.LoadOptions(path, args, out IReadOnlyList<ColumnFamilyDescriptor> families);
        options.CreateIfMissing = false;
        var progress = new Progress(context, "repair");
        progress.Phase($"repairing {path}");
        KvDb.Repair(path, options, families.Count > 0 ? [new ColumnFamilyDescriptor("default", options), .. families] : null);
        progress.Phase("done");
        return context.WriteOk();
    }

    public static int CheckConsistency(ToolContext context, ToolArgs args)
    {
        args.Allow("checkconsistency", "db", "ignore_options", "try_load_options");
        args.Parameters(1, 0, "checkconsistency --db=PATH");
        string path = args.Require("db", "checkconsistency");
        if (!File.Exists(Path.Combine(path, "CURRENT")))
        {
            throw new ToolFailureException($"IO error: {path} is not a database (no CURRENT file).");
        }
        // RocksDB's DBImpl::CheckConsistency: every live table exists with the size the MANIFEST records.
        var problems = new List<string>();
        ManifestInfo manifest = ManifestInfo.Read(path);
        foreach (ManifestColumnFamilyInfo family in manifest.ColumnFamilies)
        {
            foreach (IReadOnlyList<ManifestTableInfo> level in family.Levels)
            {
                foreach (ManifestTableInfo table in level)
                {
                    string file = Path.Combine(path, table.FileNumber.ToString("D6", CultureInfo.InvariantCulture) + ".sst");
                    var info = new FileInfo(file);
                    if (!info.Exists)
                    {
                        problems.Add($"Can't access {file}: missing");
                    }
                    else if ((ulong)info.Length != table.FileSize)
                    {
                        problems.Add($"Sst file size mismatch: {file}. Size recorded in manifest {table.FileSize}, actual size {info.Length}");
                    }
                }
            }
        }
        if (problems.Count > 0)
        {
            throw new KvCorruptionException(string.Join("; ", problems));
        }
        KvOptions options = DbSession.LoadOptions(path, args, out IReadOnlyList<ColumnFamilyDescriptor> families);
        options.ParanoidChecks = true;
        options.CreateIfMissing = false;
        var descriptors = new List<ColumnFamilyDescriptor> { new("default", options) };
        var configured = families.ToDictionary(f => f.Name, StringComparer.Ordinal);
        foreach (ManifestColumnFamilyInfo family in manifest.ColumnFamilies)
        {
            if (family.Id != 0)
            {
                descriptors.Add(configured.TryGetValue(family.Name, out ColumnFamilyDescriptor? d) ? d : new ColumnFamilyDescriptor(family.Name));
            }
        }
        using (KvDb.OpenReadOnly(path, options, descriptors))
        {
        }
        return context.WriteOk();
    }

    private static (byte[]? From, byte[]? To) Range(ToolArgs args, bool required)
    {
        bool hex = args.Has("hex") || args.Has("key_hex");
        string? from = args.Get("from");
        string? to = args.Get("to");
        if (required && (from == null || to == null))
        {
            throw new ToolUsageException($"{args.Positionals[0]} needs --from=KEY and --to=KEY.");
        }
        return (from == null ? null : DbSession.ParseBytes(from, hex, "--from key"), to == null ? null : DbSession.ParseBytes(to, hex, "--to key"));
    }
}
