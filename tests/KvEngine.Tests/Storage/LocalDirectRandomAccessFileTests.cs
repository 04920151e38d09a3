using KvEngine.Storage;

namespace KvEngine.Tests.Storage;

/// <summary>
/// O_DIRECT reads (<see cref="LocalDirectRandomAccessFile"/>): any offset and length, including
/// ranges straddling sectors, the last partial sector and past the end, equal what a buffered read
/// of the same file returns; an aligned read in aligned memory is served in place; a file written
/// buffered reads the same direct, and a file written direct reads the same buffered.
/// </summary>
public sealed class LocalDirectRandomAccessFileTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-direct-");

    public void Dispose() => _dir.Delete(recursive: true);

    private string PathOf(string name) => Path.Combine(_dir.FullName, name);

    private static byte[] RandomBytes(int length, int seed)
    {
        var data = new byte[length];
        new Random(seed).NextBytes(data);
        return data;
    }

    [Fact]
    public void OddOffsetsAndLengthsReadTheSameBytesAsABufferedRead()
    {
        const int Length = 5 * DirectIO.Alignment + 1234; // ends inside a sector
        byte[] data = RandomBytes(Length, 1);
        string path = PathOf("odd.sst");
        File.WriteAllBytes(path, data);
        using var direct = new LocalDirectRandomAccessFile(path);
        Assert.Equal(Length, direct.Length);
        Assert.Equal(DirectIO.Alignment, direct.Alignment);
        (long Offset, int Length)[] cases =
        [
            (0, 1), (1, 1), (4095, 2), (4095, 4097), (100, 8000), (4096, 4096), (3, 3 * 4096 + 5),
            (Length - 1, 1), (Length - 1234, 1234), (Length - 5000, 5000), // the last, partial sector
            (Length - 10, 100), (Length, 10), (Length + 5000, 10), // past the end: short, then nothing
            (0, Length), (7, Length - 7),
        ];
        var rng = new Random(2);
        var all = new List<(long, int)>(cases);
        for (int i = 0; i < 200; i++)
        {
            all.Add((rng.Next(Length + 100), rng.Next(1, 3 * DirectIO.Alignment)));
        }
        foreach ((long offset, int length) in all)
        {
            var got = new byte[length];
            int n = direct.Read(offset, got);
            int expected = (int)Math.Clamp(Length - offset, 0, length);
            Assert.True(expected == n, $"read of {length} at {offset}: {n} bytes, expected {expected}");
            Assert.True(data.AsSpan((int)Math.Min(offset, Length), n).SequenceEqual(got.AsSpan(0, n)), $"read of {length} at {offset} differs");
        }
    }

    [Fact]
    public void AnAlignedReadInAlignedMemoryIsServedInPlaceUpToTheEndOfTheFile()
    {
        const int Length = 3 * DirectIO.Alignment + 77;
        byte[] data = RandomBytes(Length, 3);
        string path = PathOf("aligned.sst");
        File.WriteAllBytes(path, data);
        using var direct = new LocalDirectRandomAccessFile(path);
        using AlignedBuffer buffer = AlignedBuffer.Allocate(4 * DirectIO.Alignment);
        Assert.Equal(Length, direct.Read(0, buffer.Span));
        Assert.True(data.AsSpan().SequenceEqual(buffer.Span[..Length]));
        Assert.Equal(Length - DirectIO.Alignment, direct.Read(DirectIO.Alignment, buffer.Span[..(3 * DirectIO.Alignment)]));
        Assert.True(data.AsSpan(DirectIO.Alignment).SequenceEqual(buffer.Span[..(Length - DirectIO.Alignment)]));
    }

    [Fact]
    public void AFileWrittenBufferedReadsTheSameDirectAndAFileWrittenDirectReadsTheSameBuffered()
    {
        byte[] data = RandomBytes(3 * LocalDirectWritableFile.BufferSize / 2 + 333, 4);
        string buffered = PathOf("buffered.sst");
        using (IWritableFile f = LocalFileSystem.Instance.CreateWritable(buffered, useDirectIO: false))
        {
            f.Append(data);
            f.Sync();
        }
        string direct = PathOf("direct.sst");
        using (IWritableFile f = LocalFileSystem.Instance.CreateWritable(direct, useDirectIO: true))
        {
            Assert.IsType<LocalDirectWritableFile>(f);
            f.Append(data.AsSpan(0, 1000));
            f.Append(data.AsSpan(1000));
            f.Sync();
        }
        Assert.Equal(data, File.ReadAllBytes(direct)); // written direct, read buffered
        foreach (string path in new[] { buffered, direct })
        {
            using IRandomAccessFile f = LocalFileSystem.Instance.OpenRandomAccess(path, useDirectIO: true);
            Assert.IsType<LocalDirectRandomAccessFile>(f);
            var all = new byte[data.Length + 10];
            Assert.Equal(data.Length, f.Read(0, all));
            Assert.True(data.AsSpan().SequenceEqual(all.AsSpan(0, data.Length)));
            var tail = new byte[4097];
            Assert.Equal(4097, f.Read(data.Length - 4097, tail));
            Assert.True(data.AsSpan(data.Length - 4097).SequenceEqual(tail));
        }
    }

    [Fact]
    public void AMissingFileIsFileNotFound()
    {
        Assert.Throws<FileNotFoundException>(() => new LocalDirectRandomAccessFile(PathOf("missing.sst")));
    }
}
