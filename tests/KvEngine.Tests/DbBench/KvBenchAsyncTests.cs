using System.Text.RegularExpressions;

namespace KvEngine.Tests.DbBench;

/// <summary>
/// kvbench's asynchronous read flags: -async_io and -inflight run end to end on KvEngine (with
/// direct reads), -multiread_batched chooses between the batched MultiGet and per-key Gets as in
/// db_bench, and the engines without an asynchronous path refuse the flags rather than ignore them.
/// </summary>
public sealed partial class KvBenchTests
{
    [Fact]
    public void AsyncIoAndInFlightReadsRunEndToEnd()
    {
        string db = Path.Combine(_dir.FullName, "async");
        (int code, string stdout, string stderr) = Run("-engine=kvengine", $"-db={db}", "-benchmarks=fillseq,flush,readrandom,readseq,seekrandom",
            "-num=3000", "-reads=960", "-async_io=1", "-inflight=8", "-use_direct_reads=1", "-seed=5", "-histogram=1");
        Assert.True(code == 0, stderr);
        Assert.Matches(@"readrandom\s*:\s*[\d.]+ micros/op \d+ ops/sec .*\(960 of 960 found, 8 in flight\)", stdout);
        Assert.Matches(@"readseq\s*:\s*[\d.]+ micros/op", stdout);
        Assert.Matches(@"seekrandom\s*:\s*[\d.]+ micros/op", stdout);
    }

    [Theory]
    [InlineData("kvengine", true)]
    [InlineData("kvengine", false)]
    [InlineData("rocksdb", true)]
    [InlineData("rocksdb", false)]
    public void MultiReadBatchedChoosesTheBatchedMultiGetOrOneGetPerKey(string engine, bool batched)
    {
        string db = Path.Combine(_dir.FullName, $"multiread-{engine}-{batched}");
        (int code, string stdout, string stderr) = Run($"-engine={engine}", $"-db={db}", "-benchmarks=fillseq,flush,multireadrandom",
            "-num=3000", "-reads=960", "-batch_size=32", batched ? "-multiread_batched=true" : "-multiread_batched=false", "-seed=5", "-statistics=1", "-async_io=1");
        Assert.True(code == 0, stderr);
        Assert.Matches(@"multireadrandom\s*:\s*[\d.]+ micros/op \d+ ops/sec .*\(960 of 960 found\)", stdout);
        Match calls = Regex.Match(stdout, @"rocksdb\.number\.multiget\.get COUNT : (\d+)");
        Assert.True(calls.Success, stdout);
        Assert.Equal(batched ? "30" : "0", calls.Groups[1].Value); // 960 keys in batches of 32, or none through MultiGet
    }

    [Theory]
    [InlineData("rocksdb", "-inflight=8", "-inflight")]
    [InlineData("lmdb", "-async_io=1", "-async_io")]
    [InlineData("lmdb", "-inflight=8", "-inflight")]
    [InlineData("zonetree", "-async_io=1", "-async_io")]
    [InlineData("zonetree", "-inflight=8", "-inflight")]
    public void EnginesWithoutAsynchronousReadsRefuseTheFlags(string engine, string flag, string expected)
    {
        string db = Path.Combine(_dir.FullName, "db");
        (int code, _, string stderr) = Run($"-engine={engine}", $"-db={db}", "-num=10", flag);
        Assert.NotEqual(0, code);
        Assert.Contains($"-engine={engine} cannot map", stderr, StringComparison.Ordinal);
        Assert.Contains(expected, stderr, StringComparison.Ordinal);
    }

    [Fact]
    public void InFlightReadsNeedOneColumnFamily()
    {
        (int code, _, string stderr) = Run($"-db={Path.Combine(_dir.FullName, "db")}", "-num=10", "-inflight=4", "-num_column_families=2");
        Assert.NotEqual(0, code);
        Assert.Contains("-inflight", stderr, StringComparison.Ordinal);
        Assert.Contains("default column family only", stderr, StringComparison.Ordinal);
    }
}
