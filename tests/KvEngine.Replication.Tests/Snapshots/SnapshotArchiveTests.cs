using KvEngine.Replication.Snapshots;

namespace KvEngine.Replication.Tests.Snapshots;

public sealed class SnapshotArchiveTests
{
    private static async Task<byte[]> ArchiveOfAsync(string directory)
    {
        File.WriteAllBytes(Path.Combine(directory, "000001.sst"), Enumerable.Range(0, 100_000).Select(i => (byte)i).ToArray());
        File.WriteAllText(Path.Combine(directory, "CURRENT"), "MANIFEST-000002\n");
        File.WriteAllBytes(Path.Combine(directory, "empty.log"), []);
        CheckpointSnapshot snapshot = CheckpointSnapshot.Load(directory, 42, 7);
        using var stream = new MemoryStream();
        await snapshot.WriteToAsync(stream, CancellationToken.None);
        Assert.Equal(snapshot.Length, stream.Length);
        return stream.ToArray();
    }

    [Fact]
    public async Task Round_trips_every_file_with_its_index_and_term()
    {
        using var dir = new TempDirectory();
        Directory.CreateDirectory(dir.Sub("src"));
        byte[] archive = await ArchiveOfAsync(dir.Sub("src"));
        File.WriteAllBytes(dir.Sub("a.bin"), archive);
        Directory.CreateDirectory(dir.Sub("out"));
        (long index, long term) = await SnapshotArchive.ExtractAsync(dir.Sub("a.bin"), dir.Sub("out"), CancellationToken.None);
        Assert.Equal((42L, 7L), (index, term));
        foreach (string file in Directory.GetFiles(dir.Sub("src")))
        {
            Assert.Equal(File.ReadAllBytes(file), File.ReadAllBytes(Path.Combine(dir.Sub("out"), Path.GetFileName(file))));
        }
        Assert.Equal(3, Directory.GetFiles(dir.Sub("out")).Length);
    }

    [Theory]
    [InlineData(0)] // magic
    [InlineData(30)] // inside the first file's name
    [InlineData(5000)] // inside the first file's contents (its checksum fails)
    public async Task A_flipped_byte_is_corruption(int offset)
    {
        using var dir = new TempDirectory();
        Directory.CreateDirectory(dir.Sub("src"));
        byte[] archive = await ArchiveOfAsync(dir.Sub("src"));
        archive[offset] ^= 0x40;
        File.WriteAllBytes(dir.Sub("a.bin"), archive);
        Directory.CreateDirectory(dir.Sub("out"));
        await Assert.ThrowsAnyAsync<KvCorruptionException>(async () => await SnapshotArchive.ExtractAsync(dir.Sub("a.bin"), dir.Sub("out"), CancellationToken.None));
    }

    [Theory]
    [InlineData(10)]
    [InlineData(29)]
    [InlineData(60_000)]
    [InlineData(-1)] // all but the last byte of the end marker
    public async Task A_truncated_archive_is_corruption(int length)
    {
        using var dir = new TempDirectory();
        Directory.CreateDirectory(dir.Sub("src"));
        byte[] archive = await ArchiveOfAsync(dir.Sub("src"));
        File.WriteAllBytes(dir.Sub("a.bin"), archive.AsSpan(0, length < 0 ? archive.Length + length : length).ToArray());
        Directory.CreateDirectory(dir.Sub("out"));
        await Assert.ThrowsAnyAsync<KvCorruptionException>(async () => await SnapshotArchive.ExtractAsync(dir.Sub("a.bin"), dir.Sub("out"), CancellationToken.None));
    }

    [Fact]
    public async Task A_file_name_that_leaves_the_directory_is_refused()
    {
        using var dir = new TempDirectory();
        Directory.CreateDirectory(dir.Sub("src"));
        File.WriteAllText(Path.Combine(dir.Sub("src"), "ab"), "x");
        using var stream = new MemoryStream();
        await CheckpointSnapshot.Load(dir.Sub("src"), 1, 1).WriteToAsync(stream, CancellationToken.None);
        byte[] archive = stream.ToArray();
        // The name "ab" sits after the 28-byte header and its 2-byte length: make it "..".
        archive[30] = (byte)'.';
        archive[31] = (byte)'.';
        File.WriteAllBytes(dir.Sub("a.bin"), archive);
        Directory.CreateDirectory(dir.Sub("out"));
        await Assert.ThrowsAnyAsync<KvCorruptionException>(async () => await SnapshotArchive.ExtractAsync(dir.Sub("a.bin"), dir.Sub("out"), CancellationToken.None));
    }
}
