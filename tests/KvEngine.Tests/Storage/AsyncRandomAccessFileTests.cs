using KvEngine.Storage;
using KvEngine.Storage.IO;
using KvEngine.Tests.Storage.IO;

namespace KvEngine.Tests.Storage;

/// <summary>
/// <see cref="IAsyncRandomAccessFile"/> on the local file through each engine, and the synchronous
/// completion every other <see cref="IRandomAccessFile"/> gets from
/// <see cref="RandomAccessFileExtensions.ReadAsync"/>.
/// </summary>
public sealed class AsyncRandomAccessFileTests
{
    [Theory]
    [EngineData("io_uring")]
    [EngineData("threadpool")]
    public async Task TheLocalFileReadsAsynchronouslyThroughTheEngine(string kind)
    {
        using var files = new BlockReadTestFiles();
        using IBlockReadEngine engine = BlockReadTestFiles.Create(kind);
        using var file = new LocalRandomAccessFile(files.FilePath, engine);
        IRandomAccessFile plain = file;
        Assert.IsAssignableFrom<IAsyncRandomAccessFile>(plain);
        byte[] buffer = new byte[70_001];
        Assert.Equal(buffer.Length, await plain.ReadAsync(123, buffer));
        Assert.True(files.Bytes.AsSpan(123, buffer.Length).SequenceEqual(buffer));
        Assert.Equal(1, await plain.ReadAsync(files.Bytes.Length - 1, buffer));
        Assert.Equal(files.Bytes[^1], buffer[0]);
        Assert.Equal(0, await plain.ReadAsync(files.Bytes.Length, buffer));
        using var cts = new CancellationTokenSource();
        cts.Cancel();
        Assert.True(plain.ReadAsync(0, buffer, cts.Token).IsCanceled);
    }

    [Fact]
    public async Task TheLocalFileUsesTheSharedEngineByDefault()
    {
        using var files = new BlockReadTestFiles();
        using var file = new LocalRandomAccessFile(files.FilePath);
        byte[] buffer = new byte[4096];
        Assert.Equal(4096, await file.ReadAsync(8192, buffer));
        Assert.True(files.Bytes.AsSpan(8192, 4096).SequenceEqual(buffer));
        Assert.Same(BlockReadEngines.Shared, BlockReadEngines.Shared);
    }

    [Fact]
    public async Task AnInMemoryFileCompletesSynchronouslyWithItsBytesAndItsErrors()
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/db");
        using (IWritableFile w = fs.CreateWritable("/db/a"))
        {
            w.Append([1, 2, 3, 4, 5]);
            w.Sync();
        }
        using IRandomAccessFile file = fs.OpenRandomAccess("/db/a");
        Assert.IsNotAssignableFrom<IAsyncRandomAccessFile>(file);
        byte[] buffer = new byte[4];
        ValueTask<int> read = file.ReadAsync(2, buffer);
        Assert.True(read.IsCompletedSuccessfully);
        Assert.Equal(3, await read);
        Assert.Equal(new byte[] { 3, 4, 5, 0 }, buffer);

        fs.ShouldFail = (op, _) => op == FileOperation.Read;
        ValueTask<int> failed = file.ReadAsync(0, buffer);
        Assert.True(failed.IsFaulted);
        await Assert.ThrowsAsync<IOException>(async () => await failed);

        using var cts = new CancellationTokenSource();
        cts.Cancel();
        Assert.True(file.ReadAsync(0, buffer, cts.Token).IsCanceled);
    }
}
