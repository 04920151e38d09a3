namespace KvEngine.Tests.Metamorphic;

/// <summary>
/// Op logs on which the metamorphic test found engine bugs, reduced by <see cref="MetaReducer"/>:
/// every configuration and the model must agree on them.
/// </summary>
public sealed class MetamorphicRegressionTests
{
    /// <summary>
    /// Long run, seed 1138 (2,007 operations, reduced to 9). A prefix-mode iterator
    /// (PrefixSameAsStart) at bob19 steps back to bob0 and forward again: with a prefix extractor
    /// (configurations prefix-bloom and prefix-only-partitioned) Next ends the iteration (not Valid)
    /// instead of returning bob19 again, which the model and every configuration without an
    /// extractor return. Prev left the internal iterator at apb14's deletion (the previous prefix);
    /// Next stepped on from there, so the merging iterator sought its other children to apb14 and
    /// a table with keys before bob0 (apb8) came first: the prefix check ended the scan before the
    /// skip of keys up to bob0. Fixed by seeking to the current key when turning forward in prefix
    /// seek mode, as RocksDB's ReverseToForward does.
    /// </summary>
    private const string Seed1138 = """
        # seed 1138, 2000 operations, reduced
        families 1
        merge stringappend
        batch merge 0 bod14 m112 | put 0 dog20 v112~114 | put 0 apb8 v112~33
        ingest 0 put 0 bob v796~443 | put 0 bob14 v796 | merge 0 bod3 m796 | delete 0 cat27
        deleterange 0 apb29 dog2
        batch put 0 bod18 v1602 | delete 0 apb14 | put 0 bob19 v1602~208
        merge 0 bob0 m1604
        iter i53 0 - - - prefix
        seek i53 bob11
        prev i53
        next i53
        """;

    [Fact]
    public void PrefixIteratorTurnsForwardOverRangeDeletedIngestedKeys()
    {
        string? failure = MetaCheck.Run(MetaLog.Parse(Seed1138), MetaConfigs.All, "regression-seed-1138");
        Assert.True(failure == null, failure);
    }
}
