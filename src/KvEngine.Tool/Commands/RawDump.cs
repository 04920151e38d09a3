using System.Globalization;

namespace KvEngine.Tool.Commands;

/// <summary>
/// <c>kvtool sst dump</c> and <c>--command=raw</c>: everything in one table, readable: the footer's
/// format and checksum, the properties block, the range deletions and every point entry. Its layout
/// is kvtool's own (sst_dump's raw dump lists block handles, which the public API does not expose).
/// </summary>
internal static class RawDump
{
    public static void Write(ToolContext context, SstFileReader reader, bool hex)
    {
        context.WriteLine("Footer Details:");
        context.WriteLine("--------------------------------------");
        context.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  format version: {reader.FormatVersion}"));
        context.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  checksum type: {reader.ChecksumType} ({ChecksumName(reader.ChecksumType)})"));
        context.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  file size: {reader.FileSize}"));
        context.WriteLine();
        context.Write(TablePropertiesText.Format(reader.GetTableProperties()));
        context.WriteLine();
        IReadOnlyList<SstRangeTombstone> tombstones = reader.GetRangeTombstones();
        context.WriteLine(string.Create(CultureInfo.InvariantCulture, $"Range deletions ({tombstones.Count}):"));
        context.WriteLine("--------------------------------------");
        foreach (SstRangeTombstone t in tombstones)
        {
            context.Write("  ");
            SstCommand.WriteEntry(context, t.Begin.Span, t.Sequence, (int)SstEntryType.RangeDeletion, t.End.Span, hex);
        }
        context.WriteLine();
        context.WriteLine("Data entries:");
        context.WriteLine("--------------------------------------");
        using SstFileIterator it = reader.NewIterator();
        for (it.SeekToFirst(); it.Valid; it.Next())
        {
            context.Write("  ");
            SstCommand.WriteEntry(context, it.Key, it.Sequence, (int)it.EntryType, it.Value, hex);
        }
    }

    private static string ChecksumName(int type) => type switch
    {
        0 => "none",
        1 => "CRC32C",
        2 => "xxHash",
        3 => "xxHash64",
        4 => "XXH3",
        _ => "unknown",
    };
}
