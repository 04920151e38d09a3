using System.Reflection;
using System.Runtime.InteropServices;
using KvEngine.Compression;
using KvEngine.Util;

namespace KvEngine.Tests.Compression;

/// <summary>
/// The codecs are managed packages: databases in every compression write and read with no native
/// codec library in the process, no P/Invoke besides the C library's own calls, and malformed
/// compressed bytes only ever give <see cref="KvCorruptionException"/>.
/// </summary>
public class ManagedCodecTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-codec-");

    public void Dispose() => _dir.Delete(recursive: true);

    public static TheoryData<byte> AllWritable => new()
    {
        (byte)CompressionType.Snappy, (byte)CompressionType.Lz4, (byte)CompressionType.Lz4HC, (byte)CompressionType.Zstd,
    };

    [Fact]
    public void EveryCompressionWritesAndReadsWithNoNativeCodecLoaded()
    {
        foreach (KvCompressionType compression in new[] { KvCompressionType.Snappy, KvCompressionType.Lz4, KvCompressionType.Lz4HC, KvCompressionType.Zstd })
        {
            string path = Path.Combine(_dir.FullName, compression.ToString());
            var options = new KvOptions { Compression = compression, WriteBufferSize = 64 << 10 };
            using (KvDb db = KvDb.Open(path, options))
            {
                for (int i = 0; i < 3000; i++)
                {
                    db.Put(System.Text.Encoding.ASCII.GetBytes($"key{i:D6}"), System.Text.Encoding.ASCII.GetBytes($"value-{i % 50:D4}-{new string('x', 60)}"));
                }
                db.Flush();
                db.CompactRange(null, null);
            }
            using (KvDb db = KvDb.Open(path, options))
            {
                Assert.Equal(System.Text.Encoding.ASCII.GetBytes($"value-{1234 % 50:D4}-{new string('x', 60)}"), db.Get("key001234"u8));
            }
            long sstBytes = _dir.GetDirectories(compression.ToString())[0].GetFiles("*.sst").Sum(f => f.Length);
            Assert.True(sstBytes < 3000 * 80 / 2, $"{compression}: {sstBytes} bytes of tables, the data was not compressed");
        }
        string maps = File.ReadAllText("/proc/self/maps");
        foreach (string lib in new[] { "libsnappy", "liblz4", "libzstd" })
        {
            Assert.DoesNotContain(lib, maps, StringComparison.Ordinal);
        }
    }

    [Fact]
    public void TheLibraryPInvokesOnlyTheCLibrary()
    {
        foreach (Type type in typeof(KvDb).Assembly.GetTypes())
        {
            foreach (MethodInfo method in type.GetMethods(BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Static | BindingFlags.Instance | BindingFlags.DeclaredOnly))
            {
                if (method.GetCustomAttribute<DllImportAttribute>() is { } import)
                {
                    // kernel32: LocalFileSystem's Win32 hard link (CreateHardLinkW), used only on Windows.
                    Assert.True(import.Value is "libc" or "libc.so.6" or "kernel32", $"{type.FullName}.{method.Name} imports {import.Value}");
                }
            }
        }
        foreach (AssemblyName reference in typeof(KvDb).Assembly.GetReferencedAssemblies())
        {
            Assert.DoesNotContain("RocksDb", reference.Name, StringComparison.OrdinalIgnoreCase);
        }
    }

    /// <summary>
    /// Random damage (bit flips, overwritten runs, truncation, extension) of compressed blocks:
    /// the codec either produces exactly the declared length (the block checksum catches changed
    /// literals) or the engine reports <see cref="KvCorruptionException"/> naming file and offset.
    /// </summary>
    [Theory]
    [MemberData(nameof(AllWritable))]
    public void DamagedBlocksGiveOnlyCorruptionErrors(byte codec)
    {
        var type = (CompressionType)codec;
        var rnd = new Random(codec * 31 + 7);
        var raw = new byte[4096];
        for (int i = 0; i < raw.Length; i += 100)
        {
            for (int j = 0; j < 50 && i + j < raw.Length; j++)
            {
                raw[i + j] = (byte)(' ' + rnd.Next(95));
            }
            for (int j = 50; j < 100 && i + j < raw.Length; j++)
            {
                raw[i + j] = raw[i + j - 50];
            }
        }
        using var buffer = new ByteBuffer();
        Assert.True(BlockCompression.TryCompress(type, BlockCompression.DefaultLevel, raw, buffer));
        byte[] good = buffer.WrittenSpan.ToArray();
        int reported = 0;
        for (int trial = 0; trial < 3000; trial++)
        {
            byte[] bad = Damage(good, rnd);
            try
            {
                int length = BlockCompression.ReadUncompressedLength(type, bad, 1 << 20, "000042.sst", 4242, out int header);
                var output = new byte[length];
                BlockCompression.Decompress(type, bad.AsSpan(header), output, "000042.sst", 4242);
            }
            catch (KvCorruptionException e)
            {
                Assert.Contains("000042.sst: block at offset 4242", e.Message, StringComparison.Ordinal);
                reported++;
            }
        }
        Assert.True(reported > 300, $"only {reported} of 3000 damaged blocks were reported");
    }

    private static byte[] Damage(byte[] good, Random rnd)
    {
        byte[] bad;
        switch (rnd.Next(4))
        {
            case 0:
                bad = (byte[])good.Clone();
                for (int flips = rnd.Next(1, 4); flips > 0; flips--)
                {
                    bad[rnd.Next(bad.Length)] ^= (byte)(1 << rnd.Next(8));
                }
                return bad;
            case 1:
                bad = (byte[])good.Clone();
                int start = rnd.Next(bad.Length);
                rnd.NextBytes(bad.AsSpan(start, Math.Min(bad.Length - start, rnd.Next(1, 32))));
                return bad;
            case 2:
                return good.AsSpan(0, rnd.Next(good.Length)).ToArray();
            default:
                bad = new byte[good.Length + rnd.Next(1, 64)];
                good.CopyTo(bad, 0);
                rnd.NextBytes(bad.AsSpan(good.Length));
                return bad;
        }
    }

    [Fact]
    public void LevelsChangeTheOutputAndEveryLevelRoundTrips()
    {
        byte[] raw = new byte[64 << 10];
        var rnd = new Random(5);
        for (int i = 0; i < raw.Length; i++)
        {
            raw[i] = (byte)("the quick brown fox jumps over the lazy dog "[(i * 7 + rnd.Next(3)) % 44]);
        }
        int Size(CompressionType type, int level) => RoundTrip(type, level, raw);
        Assert.True(Size(CompressionType.Zstd, 19) < Size(CompressionType.Zstd, 1));
        Assert.True(Size(CompressionType.Lz4HC, 12) < Size(CompressionType.Lz4HC, 3));
        Assert.True(Size(CompressionType.Lz4HC, BlockCompression.DefaultLevel) < Size(CompressionType.Lz4, BlockCompression.DefaultLevel));
        Assert.True(Size(CompressionType.Lz4, -8) > Size(CompressionType.Lz4, BlockCompression.DefaultLevel)); // acceleration 8
        Assert.Equal(Size(CompressionType.Zstd, 3), Size(CompressionType.Zstd, BlockCompression.DefaultLevel));
        Assert.True(Size(CompressionType.Zstd, -5) > Size(CompressionType.Zstd, 3));
    }

    [Fact]
    public void CodecContextsArePerThreadAndSafeUnderConcurrency()
    {
        byte[] raw = new byte[16 << 10];
        for (int i = 0; i < raw.Length; i++)
        {
            raw[i] = (byte)(i % 97 < 40 ? 'a' + (i % 7) : i * 31);
        }
        Parallel.For(0, 64, new ParallelOptions { MaxDegreeOfParallelism = 4 }, i =>
        {
            CompressionType type = (i % 3) switch { 0 => CompressionType.Zstd, 1 => CompressionType.Lz4, _ => CompressionType.Snappy };
            RoundTrip(type, type == CompressionType.Zstd ? 1 + (i % 5) : BlockCompression.DefaultLevel, raw);
        });
    }

    /// <summary>Compresses <paramref name="raw"/>, checks it decompresses to itself; the compressed size.</summary>
    private static int RoundTrip(CompressionType type, int level, byte[] raw)
    {
        using var buffer = new ByteBuffer();
        Assert.True(BlockCompression.TryCompress(type, level, raw, buffer));
        byte[] compressed = buffer.WrittenSpan.ToArray();
        int length = BlockCompression.ReadUncompressedLength(type, compressed, 1 << 20, "t", 0, out int header);
        var back = new byte[length];
        BlockCompression.Decompress(type, compressed.AsSpan(header), back, "t", 0);
        Assert.Equal(raw, back);
        return compressed.Length;
    }
}
