using KvEngine.Storage;

namespace KvEngine.Tests.Storage;

/// <summary>
/// O_DIRECT writes (<see cref="LocalDirectWritableFile"/>): appends of odd sizes across the aligned
/// buffer, a Flush that writes the partial last sector padded and rewrites it when more follows,
/// and a file that holds exactly the bytes appended once synced or closed (the padding cut off).
/// </summary>
public sealed class LocalDirectWritableFileTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-directw-");

    public void Dispose() => _dir.Delete(recursive: true);

    private string PathOf(string name) => Path.Combine(_dir.FullName, name);

    [Fact]
    public void OddAppendsAndFlushesLeaveExactlyTheBytesAppended()
    {
        string path = PathOf("000007.sst");
        var rng = new Random(11);
        var expected = new MemoryStream();
        using (var f = new LocalDirectWritableFile(path))
        {
            while (expected.Length < 2 * LocalDirectWritableFile.BufferSize + 12_345)
            {
                var chunk = new byte[rng.Next(1, 300_000)];
                rng.NextBytes(chunk);
                f.Append(chunk);
                expected.Write(chunk);
                Assert.Equal(expected.Length, f.Size);
                if (rng.Next(3) == 0)
                {
                    f.Flush(); // the partial sector goes out padded, and is rewritten by what follows
                    byte[] onDisk = ReadShared(path);
                    Assert.True(onDisk.Length >= expected.Length && onDisk.Length % DirectIO.Alignment == 0, $"{onDisk.Length} bytes on disk for {expected.Length}");
                    Assert.True(expected.ToArray().AsSpan().SequenceEqual(onDisk.AsSpan(0, (int)expected.Length)));
                }
            }
        }
        Assert.Equal(expected.ToArray(), File.ReadAllBytes(path));
    }

    [Fact]
    public void SyncCutsThePaddingSoTheSyncedFileHasItsTrueLength()
    {
        string path = PathOf("000008.sst");
        using var f = new LocalDirectWritableFile(path);
        f.Append(new byte[] { 1, 2, 3 });
        f.Flush();
        Assert.Equal(DirectIO.Alignment, new FileInfo(path).Length); // padded while only flushed
        f.Sync();
        Assert.Equal(new byte[] { 1, 2, 3 }, ReadShared(path));
        f.Append(new byte[DirectIO.Alignment]); // past the first sector: the rewritten one and one more
        f.Sync();
        Assert.Equal(3 + DirectIO.Alignment, new FileInfo(path).Length);
        f.Append(new byte[] { 9 });
        f.Dispose();
        byte[] all = File.ReadAllBytes(path);
        Assert.Equal(4 + DirectIO.Alignment, all.Length);
        Assert.Equal(new byte[] { 1, 2, 3 }, all[..3]);
        Assert.Equal(9, all[^1]);
        Assert.Throws<ObjectDisposedException>(() => f.Append(new byte[1]));
    }

    [Fact]
    public void AnEmptyFileStaysEmpty()
    {
        string path = PathOf("000009.sst");
        using (var f = new LocalDirectWritableFile(path))
        {
            f.Flush();
            f.Sync();
        }
        Assert.Equal(0, new FileInfo(path).Length);
    }

    private static byte[] ReadShared(string path)
    {
        using var s = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        var ms = new MemoryStream();
        s.CopyTo(ms);
        return ms.ToArray();
    }
}
