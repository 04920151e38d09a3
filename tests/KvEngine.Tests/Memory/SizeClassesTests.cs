using KvEngine.Memory;

namespace KvEngine.Tests.Memory;

public class SizeClassesTests
{
    private static readonly int[] s_firstClasses =
    [
        16, 32, 48, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 640, 768, 896, 1024,
        1280, 1536, 1792, 2048, 2560, 3072, 3584, 4096, 5120, 6144, 7168, 8192, 10240, 12288, 14336,
        16384, 20480, 24576, 28672, 32768, 40960,
    ];

    [Fact]
    public void ClassTableFollowsJemallocSpacing()
    {
        for (int i = 0; i < s_firstClasses.Length; i++)
        {
            Assert.Equal(s_firstClasses[i], SizeClasses.SizeOf(i));
        }
        Assert.Equal(SizeClasses.LargestSlabClass, SizeClasses.SizeOf(SizeClasses.SlabClassCount - 1));
        Assert.Equal(SizeClasses.MaxSize, SizeClasses.SizeOf(SizeClasses.ClassCount - 1));
        for (int i = 8; i < SizeClasses.ClassCount; i++)
        {
            // Four per doubling: each class is the one four back times two.
            Assert.Equal(2L * SizeClasses.SizeOf(i - 4), SizeClasses.SizeOf(i));
        }
    }

    [Fact]
    public void UsableSizeIsTheSmallestClassThatHolds()
    {
        int cls = 0;
        for (int size = 0; size <= 70_000; size++)
        {
            while (SizeClasses.SizeOf(cls) < size)
            {
                cls++;
            }
            Assert.Equal(SizeClasses.SizeOf(cls), SizeClasses.UsableSize(size));
            Assert.Equal(cls, SizeClasses.IndexOf(size));
        }
        for (int i = 0; i < SizeClasses.ClassCount; i++)
        {
            long c = SizeClasses.SizeOf(i);
            Assert.Equal(i, SizeClasses.IndexOf(c));
            Assert.True(SizeClasses.IsClassSize(c));
            Assert.Equal(i + 1 < SizeClasses.ClassCount ? i + 1 : i, SizeClasses.IndexOf(Math.Min(c + 1, SizeClasses.MaxSize)));
        }
        Assert.Throws<ArgumentOutOfRangeException>(() => SizeClasses.IndexOf(SizeClasses.MaxSize + 1L));
        Assert.Throws<ArgumentOutOfRangeException>(() => SizeClasses.IndexOf(-1));
    }

    [Theory]
    [InlineData(1000, 64, 896)]
    [InlineData(1024, 64, 1024)]
    [InlineData(100, 64, 64)]
    [InlineData(100, 16, 96)]
    [InlineData(1_300_000, 64, 1_048_576)]
    public void RoundDownToClassHonoursTheGranule(long size, int granule, long expected)
    {
        Assert.Equal(expected, SizeClasses.RoundDownToClass(size, granule));
    }

    [Theory]
    [InlineData(65, 64, 128)]
    [InlineData(130, 64, 192)]
    [InlineData(130, 16, 160)]
    [InlineData(1_300_000, 64, 1_310_720)]
    public void RoundUpToClassHonoursTheGranule(long size, int granule, long expected)
    {
        Assert.Equal(expected, SizeClasses.RoundUpToClass(size, granule));
    }

    [Fact]
    public void SlabsAreWholePagesAndWholeObjects()
    {
        for (int i = 0; i < SizeClasses.SlabClassCount; i++)
        {
            int slab = SizeClasses.SlabBytes(i, 64 << 10, 4096);
            Assert.True(slab >= 64 << 10);
            Assert.True(slab <= (64 << 10) + (7 * 4096), $"class {SizeClasses.SizeOf(i)}: slab {slab}");
            Assert.Equal(0, slab % 4096);
            Assert.Equal(0, slab % SizeClasses.SizeOf(i));
        }
    }
}
