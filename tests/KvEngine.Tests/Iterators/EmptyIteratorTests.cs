using KvEngine.Format;
using ValueType = KvEngine.Format.ValueType;
using KvEngine.Iterators;

namespace KvEngine.Tests.Iterators;

public class EmptyIteratorTests
{
    [Fact]
    public void IsNeverValid()
    {
        using var it = new EmptyIterator();
        it.SeekToFirst();
        Assert.False(it.Valid);
        it.SeekToLast();
        Assert.False(it.Valid);
        it.Seek(InternalKeys.Create("a"u8, 1, ValueType.ValueTypeForSeek));
        Assert.False(it.Valid);
        it.SeekForPrev(InternalKeys.Create("a"u8, 1, ValueType.ValueTypeForSeek));
        Assert.False(it.Valid);
        Assert.Throws<InvalidOperationException>(() => it.Next());
        Assert.Throws<InvalidOperationException>(() => it.Prev());
        Assert.Throws<InvalidOperationException>(() => it.Key.Length);
        Assert.Throws<InvalidOperationException>(() => it.Value.Length);
    }
}
