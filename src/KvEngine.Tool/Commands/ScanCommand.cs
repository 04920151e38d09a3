namespace KvEngine.Tool.Commands;

/// <summary>
/// <c>kvtool scan</c>, ldb's scan: the live pairs of a column family in key order, from
/// <c>--from</c> (inclusive) to <c>--to</c> (exclusive), at most <c>--max_keys</c>, one
/// <c>KEY : VALUE</c> line each (<c>KEY</c> alone with --no_value). Keys and values print as their
/// bytes, or 0x-prefixed hex with --hex (both), --key_hex, --value_hex; --from/--to are hex with
/// --hex or --key_hex. Output matches ldb's byte for byte, except that ldb cuts a non-hex key or
/// value at its first NUL byte (printf's %s) and kvtool prints every byte.
/// </summary>
internal static class ScanCommand
{
    public static int Run(ToolContext context, ToolArgs args)
    {
        args.Allow("scan", "db", "from", "to", "max_keys", "hex", "key_hex", "value_hex", "no_value", "column_family",
            "ignore_options", "try_load_options");
        args.Parameters(1, 0, "scan --db=PATH [--from=KEY] [--to=KEY] [--max_keys=N] [--hex|--key_hex|--value_hex] [--no_value] [--column_family=NAME]");
        bool keyHex = args.Has("hex") || args.Has("key_hex");
        bool valueHex = args.Has("hex") || args.Has("value_hex");
        bool noValue = args.Has("no_value");
        byte[]? from = args.Get("from") is { } f ? DbSession.ParseBytes(f, keyHex, "--from key") : null;
        byte[]? to = args.Get("to") is { } t ? DbSession.ParseBytes(t, keyHex, "--to key") : null;
        long maxKeys = args.GetInt64("max_keys", -1);
        using DbSession session = DbSession.Open(args, "scan", readOnly: true);
        var progress = new Progress(context, "scan");
        var read = new ReadOptions { FillCache = false, TotalOrderSeek = true, IterateUpperBound = to };
        using KvIterator it = session.Db.NewIterator(session.Family, read);
        if (from != null)
        {
            it.Seek(from);
        }
        else
        {
            it.SeekToFirst();
        }
        for (; it.Valid && maxKeys != 0; it.Next())
        {
            ReadOnlySpan<byte> key = it.Key;
            ReadOnlySpan<byte> value = it.Value;
            if (context.Json)
            {
                string k = ToolContext.Hex(key);
                string? v = noValue ? null : ToolContext.Hex(value);
                context.WriteJson(w =>
                {
                    w.WriteString("key", k);
                    if (v != null)
                    {
                        w.WriteString("value", v);
                    }
                });
            }
            else
            {
                context.WriteBytes(key, keyHex);
                if (!noValue)
                {
                    context.Write(" : "u8);
                    context.WriteBytes(value, valueHex);
                }
                context.WriteLine();
            }
            progress.Tick(key.Length + value.Length);
            if (maxKeys > 0 && progress.Count >= maxKeys)
            {
                break;
            }
        }
        progress.Finish();
        return ExitCodes.Ok;
    }
}
