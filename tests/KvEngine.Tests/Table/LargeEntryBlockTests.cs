using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using KvEngine.Compression;
using KvEngine.Format;
using KvEngine.Memory;
using KvEngine.Storage;
using KvEngine.Table;
using static KvEngine.Tests.Table.TableTestUtil;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Table;

/// <summary>
/// A value of at least <see cref="TableBuilder.LargeValueMinBytes"/> gets a data block of its own
/// written in pieces: uncompressed, the file is handed the caller's own value memory (no block
/// copy); with Snappy, the compressed block reaches the file in codec fragments (no whole
/// compressed copy); the bytes are exactly the block <see cref="BlockBuilder"/> makes, with a valid
/// checksum of every kind. On the read side a large uncompressed block is read straight into the
/// block's own buffer. Deterministic: the checks look at which memory the file calls receive.
/// </summary>
public class LargeEntryBlockTests
{
    private const int ValueBytes = 2 << 20;

    /// <summary>(checksum type, compression type) as bytes: every checksum kind, uncompressed and Snappy.</summary>
    public static TheoryData<byte, byte> Kinds()
    {
        var data = new TheoryData<byte, byte>();
        foreach (ChecksumType checksum in new[] { ChecksumType.Crc32C, ChecksumType.XxHash, ChecksumType.XxHash64, ChecksumType.Xxh3 })
        {
            data.Add((byte)checksum, (byte)CompressionType.None);
            data.Add((byte)checksum, (byte)CompressionType.Snappy);
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public void AnIncompressibleLargeValueGoesToTheFileFromTheCallersMemory(byte checksumType, byte compressionType)
    {
        var (checksum, compression) = ((ChecksumType)checksumType, (CompressionType)compressionType);
        byte[] value = RandomBytes(ValueBytes, seed: 7);
        var options = new TableOptions { Checksum = checksum, Compression = compression };
        var file = new RecordingWritableFile();
        List<Entry> entries = WithNeighbours(value);
        using (var builder = new TableBuilder(options, file))
        {
            foreach (Entry e in entries)
            {
                file.Watch(e.Value);
                builder.Add(e.Key, e.Value);
            }
            builder.Finish();
        }
        Assert.True(file.SawWatchedMemory, "the value was copied before it reached the file");
        AssertReadsBack(file.ToArray(), options, entries);
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public void ALargeValuesBlockIsTheBlockBlockBuilderMakes(byte checksumType, byte compressionType)
    {
        var (checksum, compression) = ((ChecksumType)checksumType, (CompressionType)compressionType);
        byte[] value = RandomBytes(ValueBytes, seed: 11);
        byte[] key = Key("large", 5);
        var options = new TableOptions { Checksum = checksum, Compression = compression };
        byte[] table = Build(options, [new Entry(key, value)]);
        using var expected = new BlockBuilder(options.BlockRestartInterval);
        expected.Add(key, value);
        ReadOnlySpan<byte> block = expected.Finish();
        // The data block comes first: offset 0, then its trailer (type None: random bytes do not compress).
        Assert.True(table.AsSpan(0, block.Length).SequenceEqual(block));
        Assert.Equal((byte)CompressionType.None, table[block.Length]);
        Assert.Equal(BlockChecksum.Compute(checksum, block, 0), ReadFixed32(table.AsSpan(block.Length + 1)));
    }

    [Theory]
    [InlineData((byte)ChecksumType.Crc32C)]
    [InlineData((byte)ChecksumType.Xxh3)]
    public void ACompressibleLargeValueReachesTheFileInSnappyFragments(byte checksumType)
    {
        var checksum = (ChecksumType)checksumType;
        byte[] value = CompressibleBytes(4 << 20);
        var options = new TableOptions { Checksum = checksum, Compression = CompressionType.Snappy };
        var file = new RecordingWritableFile();
        List<Entry> entries = WithNeighbours(value);
        using (var builder = new TableBuilder(options, file))
        {
            foreach (Entry e in entries)
            {
                builder.Add(e.Key, e.Value);
            }
            builder.Finish();
        }
        byte[] table = file.ToArray();
        Assert.True(table.Length < value.Length / 2, $"the value was not compressed: {table.Length} bytes");
        Assert.True(file.LargestAppend <= 128 << 10, $"a {file.LargestAppend}-byte append: the compressed block was assembled whole");
        AssertReadsBack(table, options, entries);
    }

    [Fact]
    public void ALargeUncompressedBlockIsReadIntoItsOwnBuffer()
    {
        byte[] value = RandomBytes(ValueBytes, seed: 3);
        using var allocator = new NativeAllocator();
        var options = new TableOptions { BlockAllocator = allocator };
        List<Entry> entries = WithNeighbours(value);
        byte[] table = Build(options, entries);
        var file = new AllocatorWatchingFile(table, allocator, ValueBytes);
        using (TableReader reader = TableReader.Open(file, table.Length, options, "large.sst"))
        {
            var got = new ArrayBufferWriter<byte>(ValueBytes);
            Assert.True(reader.TryGet(InternalKeys.UserKey(entries[1].Key), ulong.MaxValue >> 8, got, out ValueType type, verifyChecksums: true, fillCache: false));
            Assert.Equal(ValueType.Value, type);
            Assert.True(value.AsSpan().SequenceEqual(got.WrittenSpan));
        }
        Assert.Equal(1, file.LargeReads);
        Assert.True(file.LargeReadsIntoBlockMemory == 1, "the large block was read into scratch memory and copied");
    }

    [Fact]
    public void AFlippedByteInALargeUncompressedBlockIsACorruption()
    {
        byte[] value = RandomBytes(ValueBytes, seed: 21);
        var options = new TableOptions();
        List<Entry> entries = WithNeighbours(value);
        byte[] table = Build(options, entries);
        int at = table.AsSpan().IndexOf(value.AsSpan(1000, 64)) + 10; // inside the value's block
        table[at] ^= 0x40;
        using TableReader reader = Open(table, options);
        var got = new ArrayBufferWriter<byte>();
        var e = Assert.Throws<KvCorruptionException>(() =>
            reader.TryGet(InternalKeys.UserKey(entries[1].Key), ulong.MaxValue >> 8, got, out _, verifyChecksums: true, fillCache: false));
        Assert.Contains("checksum mismatch", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void AChecksumOverPiecesEqualsTheChecksumOverTheWhole()
    {
        byte[] block = RandomBytes(300_000, seed: 5);
        var rng = new Random(9);
        foreach (ChecksumType type in Enum.GetValues<ChecksumType>())
        {
            foreach (byte typeByte in new byte[] { 0, 1, 7 })
            {
                var acc = new BlockChecksumAccumulator(type);
                int at = 0;
                while (at < block.Length)
                {
                    int n = Math.Min(block.Length - at, rng.Next(0, 70_000));
                    acc.Append(block.AsSpan(at, n));
                    at += n;
                }
                Assert.Equal(BlockChecksum.Compute(type, block, typeByte), acc.Finish(typeByte));
            }
        }
    }

    private static uint ReadFixed32(ReadOnlySpan<byte> bytes) => System.Buffers.Binary.BinaryPrimitives.ReadUInt32LittleEndian(bytes);

    /// <summary>A small entry, the large value, another small entry (so the value's block sits between two ordinary ones).</summary>
    private static List<Entry> WithNeighbours(byte[] value) =>
    [
        new Entry(Key("a", 9), "small-before"u8.ToArray()),
        new Entry(Key("large", 8), value),
        new Entry(Key("z", 7), "small-after"u8.ToArray()),
    ];

    private static void AssertReadsBack(byte[] table, TableOptions options, List<Entry> entries)
    {
        using TableReader reader = Open(table, options);
        using KvEngine.Iterators.InternalIterator it = reader.NewIterator(verifyChecksums: true, fillCache: false);
        List<Entry> scanned = ScanForward(it);
        Assert.Equal(entries.Count, scanned.Count);
        for (int i = 0; i < entries.Count; i++)
        {
            Assert.Equal(entries[i].Key, scanned[i].Key);
            Assert.True(entries[i].Value.AsSpan().SequenceEqual(scanned[i].Value), $"entry {i} differs");
        }
    }

    private static byte[] RandomBytes(int length, int seed)
    {
        byte[] b = new byte[length];
        new Random(seed).NextBytes(b);
        return b;
    }

    private static byte[] CompressibleBytes(int length)
    {
        byte[] b = new byte[length];
        var rng = new Random(13);
        for (int i = 0; i < length; i += 100)
        {
            byte fill = (byte)rng.Next(256);
            b.AsSpan(i, Math.Min(100, length - i)).Fill(fill);
        }
        return b;
    }

    /// <summary>An in-memory table file that records its largest append and whether an append was handed a watched array's own memory.</summary>
    private sealed class RecordingWritableFile : IWritableFile
    {
        private readonly MemoryStream _stream = new();
        private byte[]? _watched;

        public long Size => _stream.Length;

        public bool SawWatchedMemory { get; private set; }

        public int LargestAppend { get; private set; }

        public void Watch(byte[] value) => _watched = value.Length >= TableBuilder.LargeValueMinBytes ? value : _watched;

        public void Append(ReadOnlySpan<byte> data)
        {
            LargestAppend = Math.Max(LargestAppend, data.Length);
            if (_watched != null && data.Length == _watched.Length &&
                Unsafe.AreSame(ref MemoryMarshal.GetReference(data), ref MemoryMarshal.GetArrayDataReference(_watched)))
            {
                SawWatchedMemory = true;
            }
            _stream.Write(data);
        }

        public void Flush()
        {
        }

        public void Sync()
        {
        }

        public byte[] ToArray() => _stream.ToArray();

        public void Dispose() => _stream.Dispose();
    }

    /// <summary>Counts reads of at least <c>large</c> bytes, and those made while the block allocator already held that much (into the block's own buffer).</summary>
    private sealed class AllocatorWatchingFile(byte[] data, NativeAllocator allocator, int large) : IRandomAccessFile
    {
        public int LargeReads { get; private set; }

        public int LargeReadsIntoBlockMemory { get; private set; }

        public long Length => data.Length;

        public int Read(long offset, Span<byte> buffer)
        {
            if (buffer.Length >= large)
            {
                LargeReads++;
                if (allocator.GetUsage().RequestedBytes >= buffer.Length)
                {
                    LargeReadsIntoBlockMemory++;
                }
            }
            int n = (int)Math.Max(0, Math.Min(buffer.Length, data.Length - offset));
            data.AsSpan((int)offset, n).CopyTo(buffer);
            return n;
        }

        public void Dispose()
        {
        }
    }
}
