using KvEngine.Memtable;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Memtable;

/// <summary>
/// When a memtable turns full: RocksDB's MemTable::ShouldFlushNow over the arena's blocks, not the
/// bytes used (a full memtable's blocks stay within W + 0.6 block).
/// </summary>
public class MemTableFullTests
{
    [Theory]
    [InlineData(1 << 20, 128 << 10, 0, 100)]
    [InlineData(1 << 20, 128 << 10, 4096, 100)]
    [InlineData(4 << 20, 512 << 10, 16384, 300)]
    [InlineData(64 << 10, 8 << 10, 256, 40)]
    public void FullByRocksDbsBlockRule(int writeBufferSize, int blockSize, int hashBuckets, int valueSize)
    {
        using var mem = new MemTable(new MemTableOptions(ArenaBlockSize: blockSize, HashIndexBuckets: hashBuckets));
        var value = new byte[valueSize];
        var key = new byte[16];
        var rnd = new Random(writeBufferSize ^ valueSize);
        long overAllocation = blockSize * 3L / 5;
        ulong seq = 1;
        while (!mem.IsFull(writeBufferSize))
        {
            Assert.True(seq < 10_000_000, "never full");
            rnd.NextBytes(key);
            mem.Add(seq++, ValueType.Value, key, value);
        }
        long allocated = mem.AllocatedBytes;
        // Full within the rule's window: one more block would pass W + 0.6 B...
        Assert.True(allocated + blockSize >= writeBufferSize + overAllocation, $"full at {allocated} allocated bytes");
        // ...and no further past it than the entry that was added before the last look.
        Assert.True(allocated <= writeBufferSize + overAllocation + blockSize, $"full only at {allocated} allocated bytes");
        // It turns full when its current block is three-quarters used, before it has used W bytes
        // (a rule over the bytes used would still take writes and start another block).
        Assert.True(mem.ApproximateMemoryUsage < writeBufferSize, $"full only after using {mem.ApproximateMemoryUsage} bytes");
    }

    [Fact]
    public void EmptyMemTableIsNotFullEvenAtTheSmallestWriteBuffer()
    {
        // 4 KiB, the smallest write buffer, in 4 KiB blocks with the smallest hash index.
        using var mem = new MemTable(new MemTableOptions(ArenaBlockSize: 4096, HashIndexBuckets: MemTableHashIndex.MinBuckets));
        Assert.False(mem.IsFull(4096));
        mem.Add(1, ValueType.Value, new byte[16], new byte[100]);
        Assert.False(mem.IsFull(4096));
    }
}
