using KvEngine.Tool.Commands;

namespace KvEngine.Tool;

/// <summary>
/// kvtool's entry: parses the command line, runs one command and turns its outcome into an exit
/// code (<see cref="ExitCodes"/>) and, on failure, one line on stderr ("kvtool: KIND: message");
/// user errors (a missing database, a held LOCK, a corrupt file, a bad argument) never print a
/// stack trace. <see cref="Run"/> is what Main calls and what the tests call in-process.
/// </summary>
internal static class Tool
{
    public static int Run(IReadOnlyList<string> argv, Stream output, TextWriter error, bool errorIsTerminal = false)
    {
        ToolArgs args;
        try
        {
            args = ToolArgs.Parse(argv);
        }
        catch (ToolUsageException e)
        {
            return Fail(error, ExitCodes.Usage, "usage", e.Message);
        }
        if (args.Positionals.Count == 0 || args.Has("help") || args.Positionals[0] is "help")
        {
            using var writer = new StreamWriter(output, leaveOpen: true);
            writer.Write(HelpText.Text);
            return args.Positionals.Count == 0 && !args.Has("help") ? ExitCodes.Usage : ExitCodes.Ok;
        }
        bool progress = args.Has("progress") || (errorIsTerminal && !args.Has("no_progress"));
        using var buffered = new BufferedStream(output, 1 << 16);
        var context = new ToolContext(buffered, error, args.Has("json"), progress);
        try
        {
            int code = Dispatch(context, args);
            buffered.Flush();
            return code;
        }
        catch (ToolUsageException e)
        {
            buffered.Flush();
            return Fail(error, ExitCodes.Usage, "usage", e.Message);
        }
        catch (ToolFailureException e)
        {
            buffered.Flush();
            return Fail(error, e.ExitCode, null, e.Message);
        }
        catch (KvCorruptionException e)
        {
            buffered.Flush();
            return Fail(error, ExitCodes.Corruption, "Corruption", e.Message);
        }
        catch (Exception e) when (IsLockHeld(e))
        {
            buffered.Flush();
            return Fail(error, ExitCodes.Busy, "Busy", e.Message);
        }
        catch (Exception e) when (e is KvException or IOException or UnauthorizedAccessException or ArgumentException or NotSupportedException)
        {
            buffered.Flush();
            string kind = e is IOException or UnauthorizedAccessException ? "IO error" : e is ArgumentException ? "Invalid argument" : "Failed";
            return Fail(error, ExitCodes.Failed, kind, e.Message);
        }
    }

    private static int Dispatch(ToolContext context, ToolArgs args)
    {
        string command = args.Positionals[0];
        return command switch
        {
            "scan" => ScanCommand.Run(context, args),
            "get" => GetCommand.Run(context, args),
            "put" => WriteCommands.Put(context, args),
            "delete" => WriteCommands.Delete(context, args),
            "deleterange" => WriteCommands.DeleteRange(context, args),
            "list_column_families" => ListColumnFamiliesCommand.Run(context, args),
            "sst" => SstCommand.Run(context, args),
            "manifest_dump" => ManifestDumpCommand.Run(context, args),
            "dump_wal" => DumpWalCommand.Run(context, args),
            "compact" => MaintenanceCommands.Compact(context, args),
            "approxsize" => MaintenanceCommands.ApproxSize(context, args),
            "checkpoint" => MaintenanceCommands.Checkpoint(context, args),
            "repair" => MaintenanceCommands.Repair(context, args),
            "checkconsistency" => MaintenanceCommands.CheckConsistency(context, args),
            _ => throw new ToolUsageException($"Unknown command '{command}' (kvtool help lists the commands)."),
        };
    }

    /// <summary>Another process or instance holds the database's LOCK (KvEngine's lock error, or one wrapping it).</summary>
    private static bool IsLockHeld(Exception e)
    {
        for (Exception? x = e; x != null; x = x.InnerException)
        {
            if (x is KvLockHeldException)
            {
                return true;
            }
        }
        return false;
    }

    private static int Fail(TextWriter error, int code, string? kind, string message)
    {
        string oneLine = message.ReplaceLineEndings(" ").Trim();
        error.WriteLine(kind == null ? $"kvtool: {oneLine}" : $"kvtool: {kind}: {oneLine}");
        error.Flush();
        return code;
    }
}
