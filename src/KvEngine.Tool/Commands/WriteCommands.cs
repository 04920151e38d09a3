namespace KvEngine.Tool.Commands;

/// <summary>
/// ldb's put, delete and deleterange: <c>kvtool put KEY VALUE</c>, <c>kvtool delete KEY</c>,
/// <c>kvtool deleterange BEGIN END</c> (deletes [BEGIN, END)), each a synced write to the
/// database opened read-write (keys and values hex with --hex, --key_hex, --value_hex). Print "OK"
/// as ldb does. put creates the database with --create_if_missing.
/// </summary>
internal static class WriteCommands
{
    public static int Put(ToolContext context, ToolArgs args)
    {
        args.Allow("put", "db", "hex", "key_hex", "value_hex", "column_family", "create_if_missing", "ignore_options", "try_load_options");
        IReadOnlyList<string> p = args.Parameters(1, 2, "put --db=PATH KEY VALUE [--hex|--key_hex|--value_hex] [--column_family=NAME] [--create_if_missing]");
        byte[] key = DbSession.ParseBytes(p[0], args.Has("hex") || args.Has("key_hex"), "key");
        byte[] value = DbSession.ParseBytes(p[1], args.Has("hex") || args.Has("value_hex"), "value");
        using DbSession session = DbSession.Open(args, "put", readOnly: false);
        session.Db.Put(session.Family, key, value, new WriteOptions { Sync = true });
        return context.WriteOk();
    }

    public static int Delete(ToolContext context, ToolArgs args)
    {
        args.Allow("delete", "db", "hex", "key_hex", "column_family", "ignore_options", "try_load_options");
        string keyText = args.Parameters(1, 1, "delete --db=PATH KEY [--hex|--key_hex] [--column_family=NAME]")[0];
        byte[] key = DbSession.ParseBytes(keyText, args.Has("hex") || args.Has("key_hex"), "key");
        using DbSession session = DbSession.Open(args, "delete", readOnly: false);
        session.Db.Delete(session.Family, key, new WriteOptions { Sync = true });
        return context.WriteOk();
    }

    public static int DeleteRange(ToolContext context, ToolArgs args)
    {
        args.Allow("deleterange", "db", "hex", "key_hex", "column_family", "ignore_options", "try_load_options");
        IReadOnlyList<string> p = args.Parameters(1, 2, "deleterange --db=PATH BEGIN END [--hex|--key_hex] [--column_family=NAME]");
        bool hex = args.Has("hex") || args.Has("key_hex");
        byte[] begin = DbSession.ParseBytes(p[0], hex, "begin key");
        byte[] end = DbSession.ParseBytes(p[1], hex, "end key");
        using DbSession session = DbSession.Open(args, "deleterange", readOnly: false);
        session.Db.DeleteRange(session.Family, begin, end, new WriteOptions { Sync = true });
        return context.WriteOk();
    }
}
