namespace KvEngine.Tool.Commands;

/// <summary>
/// <c>kvtool get KEY</c>, ldb's get: prints the value (hex with --hex or --value_hex; the key is
/// hex with --hex or --key_hex). A missing key prints "kvtool: Get failed: NotFound" to stderr
/// and exits 1, as ldb does.
/// </summary>
internal static class GetCommand
{
    public static int Run(ToolContext context, ToolArgs args)
    {
        args.Allow("get", "db", "hex", "key_hex", "value_hex", "column_family", "ignore_options", "try_load_options");
        string keyText = args.Parameters(1, 1, "get --db=PATH KEY [--hex|--key_hex|--value_hex] [--column_family=NAME]")[0];
        bool keyHex = args.Has("hex") || args.Has("key_hex");
        bool valueHex = args.Has("hex") || args.Has("value_hex");
        byte[] key = DbSession.ParseBytes(keyText, keyHex, "key");
        using DbSession session = DbSession.Open(args, "get", readOnly: true);
        byte[]? value = session.Db.Get(session.Family, key);
        if (value == null)
        {
            throw new ToolFailureException("Get failed: NotFound");
        }
        if (context.Json)
        {
            context.WriteJson(w =>
            {
                w.WriteString("key", ToolContext.Hex(key));
                w.WriteString("value", ToolContext.Hex(value));
            });
        }
        else
        {
            context.WriteBytes(value, valueHex);
            context.WriteLine();
        }
        return ExitCodes.Ok;
    }
}
