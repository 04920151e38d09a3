using System.Text;
using KvEngine.Format;
using KvEngine.Table;

namespace KvEngine.Tests.Table;

/// <summary>
/// Reads a partitioned table's layout straight from its bytes (footer, metaindex, top-level index,
/// top-level filter index, partitions), independently of <see cref="TableReader"/>.
/// </summary>
internal sealed class PartitionedLayout
{
    public List<(byte[] Key, BlockHandle Handle)> IndexPartitions { get; } = [];

    public List<(byte[] Key, BlockHandle Handle)> FilterPartitions { get; } = [];

    /// <summary>Per index partition: its data block handles.</summary>
    public List<List<BlockHandle>> DataBlocks { get; } = [];

    public bool UserKeys { get; private init; }

    public BlockHandle TopLevelIndex { get; private init; }

    public BlockHandle TopLevelFilterIndex { get; private set; }

    public static PartitionedLayout Read(byte[] table, TableProperties props)
    {
        Footer footer = Footer.Decode(table.AsSpan(table.Length - TableFormat.FooterSize), "t");
        var layout = new PartitionedLayout { UserKeys = props.IndexKeyIsUserKey != 0, TopLevelIndex = footer.Index };
        BlockKeyFormat format = layout.UserKeys ? BlockKeyFormat.UserKeyIndex : BlockKeyFormat.InternalKey;
        ReadIndex(table, footer.Index, format, layout.IndexPartitions);
        foreach ((byte[] _, BlockHandle h) in layout.IndexPartitions)
        {
            var blocks = new List<(byte[], BlockHandle)>();
            ReadIndex(table, h, format, blocks);
            layout.DataBlocks.Add(blocks.Select(b => b.Item2).ToList());
        }
        using var meta = new Block(table.AsSpan((int)footer.MetaIndex.Offset, (int)footer.MetaIndex.Size).ToArray(), (int)footer.MetaIndex.Size, false, false, "t");
        var cursor = new BlockCursor(meta, BlockKeyFormat.Bytewise);
        for (cursor.SeekToFirst(); cursor.Valid; cursor.Next())
        {
            if (Encoding.ASCII.GetString(cursor.Key).StartsWith(TableFormat.PartitionedFilterBlockPrefix, StringComparison.Ordinal))
            {
                ReadOnlySpan<byte> v = cursor.Value;
                Assert.True(BlockHandle.TryDecode(ref v, out BlockHandle fh));
                layout.TopLevelFilterIndex = fh;
                ReadIndex(table, fh, format, layout.FilterPartitions);
            }
        }
        cursor.Dispose();
        return layout;
    }

    /// <summary>Raw (uncompressed) contents of the block at <paramref name="h"/>; only for uncompressed tables.</summary>
    public static byte[] Contents(byte[] table, BlockHandle h)
    {
        Assert.Equal(0, table[(int)(h.Offset + h.Size)]);
        return table.AsSpan((int)h.Offset, (int)h.Size).ToArray();
    }

    private static void ReadIndex(byte[] table, BlockHandle h, BlockKeyFormat format, List<(byte[], BlockHandle)> into)
    {
        byte[] contents = Contents(table, h);
        using var block = new Block(contents, contents.Length, false, false, "t");
        var cursor = new BlockCursor(block, format, IndexValueFormat.DeltaHandle);
        for (cursor.SeekToFirst(); cursor.Valid; cursor.Next())
        {
            into.Add((cursor.Key.ToArray(), cursor.Handle));
        }
        cursor.Dispose();
    }

    /// <summary>The entries of one (uncompressed) data block.</summary>
    public static List<Entry> DataEntries(byte[] table, BlockHandle h)
    {
        byte[] contents = Contents(table, h);
        using var block = new Block(contents, contents.Length, false, true, "t");
        var cursor = new BlockCursor(block, BlockKeyFormat.InternalKey);
        var list = new List<Entry>();
        for (cursor.SeekToFirst(); cursor.Valid; cursor.Next())
        {
            list.Add(new Entry(cursor.Key.ToArray(), cursor.Value.ToArray()));
        }
        cursor.Dispose();
        return list;
    }

    public static byte[] UserKeyOf(byte[] indexKey, bool userKeys) => userKeys ? indexKey : InternalKeys.UserKey(indexKey).ToArray();
}
