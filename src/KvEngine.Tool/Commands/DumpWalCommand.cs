using System.Globalization;

namespace KvEngine.Tool.Commands;

/// <summary>
/// <c>kvtool dump_wal --walfile=FILE</c>, ldb's: one line per record,
/// <c>SEQUENCE,COUNT,BYTESIZE,OFFSET,OP(CF) : 0xKEY ...</c> (with --print_value, <c>0xKEY : 0xVALUE</c>),
/// after a column header with --header. Matches ldb's output byte for byte for the records
/// KvEngine reads (puts, deletes, single deletes, range deletes, merges).
/// </summary>
internal static class DumpWalCommand
{
    public static int Run(ToolContext context, ToolArgs args)
    {
        args.Allow("dump_wal", "walfile", "print_value", "header", "db");
        args.Parameters(1, 0, "dump_wal --walfile=FILE [--print_value] [--header]");
        string path = args.Require("walfile", "dump_wal");
        bool values = args.Has("print_value");
        if (args.Has("header") && !context.Json)
        {
            context.WriteLine(values ? "Sequence,Count,ByteSize,Physical Offset,Key(s) : value " : "Sequence,Count,ByteSize,Physical Offset,Key(s)");
        }
        var progress = new Progress(context, "dump_wal");
        foreach (WalRecordInfo record in WalFileReader.ReadRecords(path))
        {
            progress.Tick(record.ByteSize);
            if (context.Json)
            {
                context.WriteJson(w =>
                {
                    w.WriteNumber("sequence", record.Sequence);
                    w.WriteNumber("count", record.Count);
                    w.WriteNumber("byte_size", record.ByteSize);
                    w.WriteNumber("offset", record.Offset);
                    w.WriteStartArray("operations");
                    foreach (WalOperation op in record.Operations)
                    {
                        w.WriteStartObject();
                        w.WriteString("type", Name(op.Type));
                        w.WriteNumber("column_family", op.ColumnFamily);
                        w.WriteString("key", ToolContext.Hex(op.Key.Span));
                        if (op.Type == WalOperationType.DeleteRange)
                        {
                            w.WriteString("end_key", ToolContext.Hex(op.Value.Span));
                        }
                        else if (values && op.Type is WalOperationType.Put or WalOperationType.Merge)
                        {
                            w.WriteString("value", ToolContext.Hex(op.Value.Span));
                        }
                        w.WriteEndObject();
                    }
                    w.WriteEndArray();
                });
                continue;
            }
            var line = new System.Text.StringBuilder();
            line.Append(CultureInfo.InvariantCulture, $"{record.Sequence},{record.Count},{record.ByteSize},{record.Offset},");
            foreach (WalOperation op in record.Operations)
            {
                line.Append(CultureInfo.InvariantCulture, $"{Name(op.Type)}({op.ColumnFamily}) : ").Append(ToolContext.Hex(op.Key.Span)).Append(' ');
                if (op.Type == WalOperationType.DeleteRange)
                {
                    line.Append(ToolContext.Hex(op.Value.Span)).Append(' ');
                }
                else if (values && op.Type is WalOperationType.Put or WalOperationType.Merge)
                {
                    line.Length--;
                    line.Append(" : ").Append(ToolContext.Hex(op.Value.Span)).Append(' ');
                }
            }
            context.WriteLine(line.ToString());
        }
        progress.Finish();
        return ExitCodes.Ok;
    }

    private static string Name(WalOperationType type) => type switch
    {
        WalOperationType.Put => "PUT",
        WalOperationType.Delete => "DELETE",
        WalOperationType.SingleDelete => "SINGLE_DELETE",
        WalOperationType.DeleteRange => "DELETE_RANGE",
        _ => "MERGE",
    };
}
