using KvEngine.Format;
using KvEngine.RangeDel;
using KvEngine.Table;
using KvEngine.Tests.Table;

using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.RangeDel;

/// <summary>The table reader's fragmented list: built once, clipped, and damaged blocks are corruption.</summary>
public sealed class RangeDelTableTests
{
    private static byte[] TableWithTombstones(out TableOptions options)
    {
        options = new TableOptions();
        return TableTestUtil.Build(options, [new Entry(TableTestUtil.Key("m", 1), "v"u8.ToArray())], b =>
        {
            // Overlapping and unfragmented, as SstFileWriter writes them.
            b.AddRangeTombstone(TableTestUtil.Key("a", 9, ValueType.RangeDeletion), "k"u8);
            b.AddRangeTombstone(TableTestUtil.Key("c", 12, ValueType.RangeDeletion), "z"u8);
        });
    }

    [Fact]
    public void FragmentsTheBlockOnceClippedToTheFile()
    {
        byte[] table = TableWithTombstones(out TableOptions options);
        using TableReader reader = TableTestUtil.Open(table, options);
        Assert.Null(reader.RangeTombstones); // not loaded yet
        reader.LoadRangeTombstones("b"u8.ToArray(), "p"u8.ToArray());
        FragmentedRangeTombstoneList list = reader.RangeTombstones!;
        Assert.Equal(0UL, list.MaxCoveringSequence("a"u8, InternalKeys.MaxSequenceNumber)); // clipped below
        Assert.Equal(9UL, list.MaxCoveringSequence("b"u8, InternalKeys.MaxSequenceNumber));
        Assert.Equal(12UL, list.MaxCoveringSequence("d"u8, InternalKeys.MaxSequenceNumber));
        Assert.Equal(9UL, list.MaxCoveringSequence("d"u8, 11));
        Assert.Equal(0UL, list.MaxCoveringSequence("p"u8, InternalKeys.MaxSequenceNumber)); // clipped above
    }

    [Fact]
    public void DamagedRangeDelBlockIsCorruption()
    {
        byte[] table = TableWithTombstones(out TableOptions options);
        ulong offset;
        using (TableReader reader = TableTestUtil.Open(table, options))
        {
            offset = reader.RangeDelHandle!.Value.Offset;
        }
        table[offset + 4] ^= 0x40;
        using TableReader damaged = TableTestUtil.Open(table, options);
        Assert.Throws<KvCorruptionException>(() => damaged.LoadRangeTombstones(null, null));
    }
}
