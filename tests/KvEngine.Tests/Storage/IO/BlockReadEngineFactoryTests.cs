using KvEngine.Storage.IO;
using Microsoft.Win32.SafeHandles;

namespace KvEngine.Tests.Storage.IO;

/// <summary>How <see cref="BlockReadEngines.Create"/> chooses: io_uring when allowed, the thread pool when refused or forced.</summary>
public sealed class BlockReadEngineFactoryTests
{
    private static readonly Func<string, string?> s_noEnvironment = _ => null;

    [IoUringFact]
    public void AutoPicksIoUringWhereTheKernelAllowsIt()
    {
        using IBlockReadEngine engine = BlockReadEngines.Create(new BlockReadEngineOptions { Environment = s_noEnvironment });
        Assert.Equal(BlockReadEngineKind.IoUring, engine.Kind);
        Assert.Null(engine.FallbackReason);
    }

    [Theory]
    [InlineData(1, "EPERM")]
    [InlineData(38, "ENOSYS")]
    [InlineData(12, "ENOMEM")]
    public async Task ARefusedSetupFallsBackToTheThreadPoolSayingWhy(int errno, string name)
    {
        using IBlockReadEngine engine = BlockReadEngines.Create(new BlockReadEngineOptions { SimulatedSetupErrno = errno, Environment = s_noEnvironment });
        Assert.Equal(BlockReadEngineKind.ThreadPool, engine.Kind);
        Assert.Contains(name, engine.FallbackReason, StringComparison.Ordinal);
        using var files = new BlockReadTestFiles();
        using SafeFileHandle file = files.OpenRead();
        byte[] destination = new byte[100];
        Assert.Equal(100, await engine.ReadAsync(file, destination, 50));
        Assert.True(files.Bytes.AsSpan(50, 100).SequenceEqual(destination));
    }

    [Fact]
    public void AKernelRefusalFallsBackToo()
    {
        // More entries than IORING_MAX_ENTRIES (32768): the kernel itself answers EINVAL.
        using IBlockReadEngine engine = BlockReadEngines.Create(new BlockReadEngineOptions { RingEntries = 65536, Environment = s_noEnvironment });
        Assert.Equal(BlockReadEngineKind.ThreadPool, engine.Kind);
        Assert.Contains("io_uring_setup failed", engine.FallbackReason, StringComparison.Ordinal);
    }

    [Fact]
    public void ForcingIoUringWhenRefusedThrowsWithTheErrno()
    {
        IOException e = Assert.Throws<IOException>(() => BlockReadEngines.Create(new BlockReadEngineOptions { Kind = BlockReadEngineKind.IoUring, SimulatedSetupErrno = 1 }));
        Assert.Equal(1, e.HResult);
        Assert.Contains("EPERM", e.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("threadpool")]
    [InlineData(" ThreadPool ")]
    public void TheEnvironmentVariableForcesTheThreadPool(string value)
    {
        using IBlockReadEngine engine = BlockReadEngines.Create(new BlockReadEngineOptions { Environment = n => n == "KVENGINE_IO_ENGINE" ? value : null });
        Assert.Equal(BlockReadEngineKind.ThreadPool, engine.Kind);
        Assert.Contains("KVENGINE_IO_ENGINE", engine.FallbackReason, StringComparison.Ordinal);
    }

    [Fact]
    public void AnUnknownEngineNameIsRefused()
    {
        ArgumentException e = Assert.Throws<ArgumentException>(() => BlockReadEngines.Create(new BlockReadEngineOptions { Environment = _ => "uring2" }));
        Assert.Contains("uring2", e.Message, StringComparison.Ordinal);
    }
}
