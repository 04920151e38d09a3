using KvEngine.Cache;
using KvEngine.Memory;

namespace KvEngine.Tests.Cache;

public class ChunkSplitterTests
{
    [Fact]
    public void ReferenceExampleSplitsIntoBinsAndAnExactTail()
    {
        // 8500 payload bytes: 8192 (8176 payload), then pred = 16 + 324 = 340 -> 256 (512 - 340 >= 128), then 16 + 84 = 100 exact.
        Assert.Equal([8192, 256, 100], ChunkSplitter.Plan(8500));
        Assert.Equal([16 + 50], ChunkSplitter.Plan(50));           // below the smallest bin
        Assert.Equal([16 + 20000], ChunkSplitter.Plan(20000));     // at or above the largest
        Assert.Equal([16 + 4000], ChunkSplitter.Plan(4000));       // 4096 - 4016 < 128: exact
    }

    [Fact]
    public void BinsAreAllocatorClassesAndPayloadsAddUp()
    {
        foreach (int bin in ChunkSplitter.Bins)
        {
            Assert.Equal(bin, NativeAllocator.UsableSize(bin));
        }
        for (int n = 0; n < 40000; n += 37)
        {
            List<int> plan = ChunkSplitter.Plan(n);
            long payload = 0;
            for (int i = 0; i < plan.Count; i++)
            {
                payload += plan[i] - ChunkSplitter.HeaderBytes;
                if (i < plan.Count - 1)
                {
                    Assert.Contains(plan[i], ChunkSplitter.Bins.ToArray());
                }
            }
            Assert.Equal(n, payload);
            Assert.True(plan.Count <= 16);
        }
    }
}
