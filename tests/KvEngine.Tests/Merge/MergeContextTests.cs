using KvEngine.Merge;

namespace KvEngine.Tests.Merge;

/// <summary><see cref="MergeContext"/>: both push orders list oldest first, growth keeps earlier slices, reuse after Clear.</summary>
public sealed class MergeContextTests
{
    private static string[] Listed(MergeContext c) => c.Select(m => System.Text.Encoding.ASCII.GetString(m.Span)).ToArray();

    [Fact]
    public void ListsOldestFirstWhicheverWayOperandsArrive()
    {
        var c = new MergeContext(16);
        c.PushOlder("new"u8);
        c.PushOlder("mid"u8);
        c.PushOlder("old"u8);
        Assert.Equal(["old", "mid", "new"], Listed(c));
        Assert.Equal("new"u8.ToArray(), c.Newest.ToArray());
        c.Clear();
        Assert.Empty(c);
        c.PushNewer("old"u8);
        c.PushNewer("new"u8);
        Assert.Equal(["old", "new"], Listed(c));
        Assert.Throws<InvalidOperationException>(() => c.PushOlder("x"u8));
        Assert.Throws<ArgumentOutOfRangeException>(() => c[2]);
    }

    [Fact]
    public void GrowsPastItsBufferAndSliceCountKeepingEarlierOperands()
    {
        var c = new MergeContext(16);
        ReadOnlyMemory<byte> first = default;
        for (int i = 0; i < 100; i++)
        {
            c.PushNewer(System.Text.Encoding.ASCII.GetBytes($"operand-{i:D3}"));
            if (i == 0)
            {
                first = c[0];
            }
        }
        Assert.Equal(100, c.Count);
        Assert.Equal("operand-000", System.Text.Encoding.ASCII.GetString(first.Span));
        Assert.Equal("operand-099", System.Text.Encoding.ASCII.GetString(c[99].Span));
    }
}
