namespace KvEngine.Tool.Commands;

/// <summary>
/// <c>kvtool list_column_families</c>, ldb's: "Column families in PATH: " then "{default, ...}",
/// read from CURRENT and the MANIFEST only (the database may be open elsewhere).
/// </summary>
internal static class ListColumnFamiliesCommand
{
    public static int Run(ToolContext context, ToolArgs args)
    {
        args.Allow("list_column_families", "db");
        args.Parameters(1, 0, "list_column_families --db=PATH");
        string path = args.Require("db", "list_column_families");
        if (!File.Exists(Path.Combine(path, "CURRENT")))
        {
            throw new ToolFailureException($"IO error: {path} is not a database (no CURRENT file).");
        }
        IReadOnlyList<string> families = KvDb.ListColumnFamilies(path);
        if (context.Json)
        {
            context.WriteJson(w =>
            {
                w.WriteStartArray("column_families");
                foreach (string name in families)
                {
                    w.WriteStringValue(name);
                }
                w.WriteEndArray();
            });
        }
        else
        {
            context.WriteLine($"Column families in {path}: ");
            context.WriteLine("{" + string.Join(", ", families) + "}");
        }
        return ExitCodes.Ok;
    }
}
