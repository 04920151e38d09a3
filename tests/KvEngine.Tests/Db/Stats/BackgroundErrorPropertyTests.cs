using System.Buffers;

namespace KvEngine.Tests.Db.Stats;

/// <summary>
/// GetProperty("kvengine.background-error"): the message of the error that stops writes now, empty
/// before it and after Resume, while "rocksdb.background-errors" keeps counting (what a health
/// check needs and the count cannot tell). The error comes from a compaction filter that throws.
/// </summary>
public sealed class BackgroundErrorPropertyTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-bg-error-property-");

    public void Dispose() => _dir.Delete(recursive: true);

    private sealed class ThrowingFilter : KvCompactionFilter
    {
        public volatile bool Throw;

        public override string Name => "test.throwing";

        public override KvCompactionFilterDecision FilterValue(int level, ReadOnlySpan<byte> key, ReadOnlySpan<byte> existingValue, IBufferWriter<byte> newValue) =>
            Throw ? throw new IOException("filter failed on purpose") : KvCompactionFilterDecision.Keep;
    }

    [Fact]
    public void ShowsTheCurrentErrorUntilResume()
    {
        var filter = new ThrowingFilter();
        using KvDb db = KvDb.Open(Path.Combine(_dir.FullName, "db"), new KvOptions { CompactionFilter = filter, DisableAutoCompactions = true });
        Assert.Equal(string.Empty, db.GetProperty("kvengine.background-error"));
        db.Put("a"u8, "1"u8);
        db.Flush();
        db.Put("b"u8, "2"u8);
        db.Flush();
        filter.Throw = true;
        Assert.ThrowsAny<KvException>(() => db.CompactRange(null, null));

        Assert.Contains("filter failed on purpose", db.GetProperty("kvengine.background-error"), StringComparison.Ordinal);
        Assert.Equal("1", db.GetProperty("rocksdb.background-errors"));

        filter.Throw = false;
        db.Resume();
        Assert.Equal(string.Empty, db.GetProperty("kvengine.background-error"));
        Assert.Equal("1", db.GetProperty("rocksdb.background-errors"));
        db.Put("c"u8, "3"u8);
    }
}
