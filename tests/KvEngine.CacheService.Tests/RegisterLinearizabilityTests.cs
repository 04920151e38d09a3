namespace KvEngine.CacheService.Tests;

/// <summary>The register checker on hand-made histories, linearizable and not.</summary>
public sealed class RegisterLinearizabilityTests
{
    private static RegisterOperation W(string v, long call, long ret) => new(true, v, call, ret);

    private static RegisterOperation R(string? v, long call, long ret) => new(false, v, call, ret);

    private static RegisterOperation Lost(string v, long call) => new(true, v, call, long.MaxValue);

    [Fact]
    public void Sequential_reads_of_the_last_write_are_linearizable() =>
        Assert.True(RegisterLinearizability.Check([R(null, 0, 1), W("a", 2, 3), R("a", 4, 5), W("b", 6, 7), R("b", 8, 9)]));

    [Fact]
    public void A_read_of_an_overwritten_value_after_the_overwrite_returned_is_not() =>
        Assert.False(RegisterLinearizability.Check([W("a", 0, 1), W("b", 2, 3), R("a", 4, 5)]));

    [Fact]
    public void Concurrent_operations_may_take_effect_in_either_order()
    {
        // The write of b overlaps both reads: a, then b, is fine.
        Assert.True(RegisterLinearizability.Check([W("a", 0, 1), W("b", 2, 10), R("a", 3, 4), R("b", 5, 6)]));
        // But once a read saw b, a later read cannot see a again.
        Assert.False(RegisterLinearizability.Check([W("a", 0, 1), W("b", 2, 10), R("b", 3, 4), R("a", 5, 6)]));
    }

    [Fact]
    public void A_value_never_written_is_not()
    {
        Assert.False(RegisterLinearizability.Check([W("a", 0, 1), R("z", 2, 3)]));
        Assert.False(RegisterLinearizability.Check([R("a", 0, 1), W("a", 2, 3)])); // read before the write was invoked
    }

    [Fact]
    public void An_unanswered_write_may_take_effect_late_or_never()
    {
        Assert.True(RegisterLinearizability.Check([W("a", 0, 1), Lost("b", 2), R("a", 3, 4), R("b", 5, 6)]));
        Assert.True(RegisterLinearizability.Check([W("a", 0, 1), Lost("b", 2), R("a", 3, 4), R("a", 5, 6)]));
        Assert.False(RegisterLinearizability.Check([W("a", 0, 1), Lost("b", 2), R("b", 3, 4), R("a", 5, 6)]));
        Assert.False(RegisterLinearizability.Check([Lost("b", 2), R("b", 0, 1)])); // seen before it was written
    }

    [Fact]
    public void A_long_concurrent_history_is_checked_quickly()
    {
        // Three clients, 300 operations, each client's operations overlapping the others'.
        var history = new List<RegisterOperation>();
        string? current = null;
        for (int i = 0; i < 300; i++)
        {
            long t = i * 10;
            if (i % 3 == 0)
            {
                current = "v" + i;
                history.Add(W(current, t, t + 15));
            }
            else
            {
                history.Add(R(current, t + 16, t + 25));
            }
        }
        Assert.True(RegisterLinearizability.Check(history));
    }
}
