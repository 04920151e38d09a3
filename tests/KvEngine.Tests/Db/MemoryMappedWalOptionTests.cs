using KvEngine.Storage;

namespace KvEngine.Tests.Db;

/// <summary>
/// <see cref="KvOptions.MemoryMappedWal"/> and <see cref="WalRecoveryMode.AbsoluteConsistency"/>:
/// a kill in the middle of a copy into the mapped log leaves a torn last record, which that mode
/// refuses, so left unset the option is off for that mode (the log is written with write(2)), and
/// set to true together with it the open is refused. Every other mode keeps the mapped log. The
/// writer in use shows in the log's length while the database is open: the mapped log is a
/// multiple of its 1 MiB reservation step, the plain log exactly its records.
/// </summary>
public sealed class MemoryMappedWalOptionTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-walmode-");

    public void Dispose() => _dir.Delete(recursive: true);

    private string DbPath => Path.Combine(_dir.FullName, "db");

    [Fact]
    public void LeftUnsetItIsOffForAbsoluteConsistencyAndTheLogIsWrittenPlainly()
    {
        var options = new KvOptions { WalRecoveryMode = WalRecoveryMode.AbsoluteConsistency };
        Assert.False(options.MemoryMappedWal);

        long length = OpenWriteAndMeasureTheLog(options);
        Assert.NotEqual(0, length % LocalMappedWritableFile.WindowSize); // the records and nothing more

        using KvDb again = KvDb.Open(DbPath, options);
        Assert.Equal("v99"u8.ToArray(), again.Get("k99"u8));
    }

    [Theory]
    [InlineData(WalRecoveryMode.TolerateCorruptedTailRecords)]
    [InlineData(WalRecoveryMode.PointInTimeRecovery)]
    [InlineData(WalRecoveryMode.SkipAnyCorruptedRecords)]
    public void LeftUnsetItIsOnForEveryOtherMode(WalRecoveryMode mode)
    {
        Assert.True(OperatingSystem.IsLinux() && Environment.Is64BitProcess, "the engine's tests run on 64-bit Linux");
        var options = new KvOptions { WalRecoveryMode = mode };
        Assert.True(options.MemoryMappedWal);
        Assert.Equal(0, OpenWriteAndMeasureTheLog(options) % LocalMappedWritableFile.WindowSize); // records, then reserved zeros
    }

    [Fact]
    public void SetToTrueWithAbsoluteConsistencyTheOpenIsRefusedWithTheReason()
    {
        var options = new KvOptions { MemoryMappedWal = true, WalRecoveryMode = WalRecoveryMode.AbsoluteConsistency };
        var e = Assert.Throws<ArgumentException>(() => KvDb.Open(DbPath, options).Dispose());
        Assert.Equal(nameof(KvOptions.MemoryMappedWal), e.ParamName);
        Assert.Contains("AbsoluteConsistency", e.Message, StringComparison.Ordinal);
        Assert.Contains("torn", e.Message, StringComparison.Ordinal);
        Assert.False(Directory.Exists(DbPath)); // refused before anything was created

        // The order the two were set in does not matter.
        var reversed = new KvOptions { WalRecoveryMode = WalRecoveryMode.AbsoluteConsistency, MemoryMappedWal = true };
        Assert.Throws<ArgumentException>(() => KvDb.Open(DbPath, reversed).Dispose());
    }

    [Fact]
    public void SetToFalseWithAbsoluteConsistencyOpens()
    {
        var options = new KvOptions { MemoryMappedWal = false, WalRecoveryMode = WalRecoveryMode.AbsoluteConsistency };
        Assert.NotEqual(0, OpenWriteAndMeasureTheLog(options) % LocalMappedWritableFile.WindowSize);
    }

    [Fact]
    public void SetToTrueItStaysTrueWhenTheModeChangesBackAndAnExplicitFalseStaysFalse()
    {
        var options = new KvOptions { MemoryMappedWal = true, WalRecoveryMode = WalRecoveryMode.AbsoluteConsistency };
        options.WalRecoveryMode = WalRecoveryMode.PointInTimeRecovery;
        Assert.True(options.MemoryMappedWal);
        using (KvDb.Open(DbPath, options))
        {
        }

        var off = new KvOptions { MemoryMappedWal = false };
        Assert.False(off.MemoryMappedWal);
    }

    // Opens, writes 100 small records (each handed to the OS), and returns the log's length while
    // the database is still open: what a process kill at that moment would leave.
    private long OpenWriteAndMeasureTheLog(KvOptions options)
    {
        using KvDb db = KvDb.Open(DbPath, options);
        for (int i = 0; i < 100; i++)
        {
            db.Put(System.Text.Encoding.ASCII.GetBytes($"k{i}"), System.Text.Encoding.ASCII.GetBytes($"v{i}"));
        }
        string wal = Directory.GetFiles(DbPath, "*.log").Single();
        long length = new FileInfo(wal).Length;
        Assert.NotEqual(0, length);
        return length;
    }
}
