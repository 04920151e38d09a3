using System.Buffers;
using System.Text;

namespace KvEngine.Tests.Merge;

/// <summary>The built-in operators' RocksDB semantics and <see cref="KvMergeOperator"/>'s default partial merge.</summary>
public sealed class MergeOperatorTests
{
    private static ReadOnlyMemory<byte>[] Ops(params byte[][] operands) => operands.Select(o => (ReadOnlyMemory<byte>)o).ToArray();

    private static byte[] U(ulong v) => UInt64AddOperator.Encode(v);

    private static byte[] S(string s) => Encoding.ASCII.GetBytes(s);

    [Fact]
    public void UInt64AddAddsLittleEndianCountersModulo2To64()
    {
        var op = UInt64AddOperator.Instance;
        Assert.Equal("UInt64AddOperator", op.Name);
        var w = new ArrayBufferWriter<byte>();
        Assert.True(op.TryFullMerge("k"u8, true, U(10), Ops(U(5)), w));
        Assert.Equal(new byte[] { 0x0F, 0, 0, 0, 0, 0, 0, 0 }, w.WrittenSpan.ToArray()); // formats-2 §4's example
        w.ResetWrittenCount();
        Assert.True(op.TryFullMerge("k"u8, false, default, Ops(U(ulong.MaxValue), U(2)), w));
        Assert.Equal(U(1), w.WrittenSpan.ToArray());
    }

    [Fact]
    public void UInt64AddReadsMalformedValuesAndOperandsAsZeroAsRocksDb()
    {
        var op = UInt64AddOperator.Instance;
        var w = new ArrayBufferWriter<byte>();
        Assert.True(op.TryFullMerge("k"u8, true, [1, 2, 3], Ops(U(4), [9], new byte[9]), w));
        Assert.Equal(U(4), w.WrittenSpan.ToArray());
        w.ResetWrittenCount();
        Assert.True(op.TryPartialMerge("k"u8, [1], U(6), w));
        Assert.Equal(U(6), w.WrittenSpan.ToArray());
        w.ResetWrittenCount();
        Assert.True(op.TryPartialMergeMulti("k"u8, Ops(U(1), U(2), U(3)), w));
        Assert.Equal(U(6), w.WrittenSpan.ToArray());
        Assert.Equal(0UL, UInt64AddOperator.Decode([1, 2]));
    }

    [Fact]
    public void StringAppendJoinsWithItsDelimiter()
    {
        var comma = new StringAppendOperator();
        Assert.Equal("StringAppendOperator", comma.Name);
        var w = new ArrayBufferWriter<byte>();
        Assert.True(comma.TryFullMerge("k"u8, true, S("a"), Ops(S("b"), S("c")), w));
        Assert.Equal("a,b,c", Encoding.ASCII.GetString(w.WrittenSpan));
        w.ResetWrittenCount();
        Assert.True(comma.TryFullMerge("k"u8, false, default, Ops(S("b")), w));
        Assert.Equal("b", Encoding.ASCII.GetString(w.WrittenSpan));
        w.ResetWrittenCount();
        Assert.True(comma.TryFullMerge("k"u8, true, default, Ops(S("b")), w)); // an empty existing value is still a value
        Assert.Equal(",b", Encoding.ASCII.GetString(w.WrittenSpan));

        var multi = new StringAppendOperator("::"u8);
        w.ResetWrittenCount();
        Assert.True(multi.TryPartialMergeMulti("k"u8, Ops(S("x"), S("y"), S("z")), w));
        Assert.Equal("x::y::z", Encoding.ASCII.GetString(w.WrittenSpan));
        var none = new StringAppendOperator(ReadOnlySpan<byte>.Empty);
        w.ResetWrittenCount();
        Assert.True(none.TryPartialMerge("k"u8, S("x"), S("y"), w));
        Assert.Equal("xy", Encoding.ASCII.GetString(w.WrittenSpan));
    }

    private sealed class PairwiseOnly : KvMergeOperator
    {
        public int Calls;

        public override string Name => "PairwiseOnly";

        public override bool TryFullMerge(ReadOnlySpan<byte> key, bool hasExistingValue, ReadOnlySpan<byte> existingValue,
            IReadOnlyList<ReadOnlyMemory<byte>> operands, IBufferWriter<byte> result) => false;

        public override bool TryPartialMerge(ReadOnlySpan<byte> key, ReadOnlySpan<byte> left, ReadOnlySpan<byte> right, IBufferWriter<byte> result)
        {
            Calls++;
            if (left.SequenceEqual("no"u8) || right.SequenceEqual("no"u8))
            {
                return false;
            }
            result.Write(left);
            result.Write("|"u8);
            result.Write(right);
            return true;
        }
    }

    [Fact]
    public void DefaultPartialMergeMultiFoldsLeftToRightAndDeclinesWithAnyPair()
    {
        var op = new PairwiseOnly();
        var w = new ArrayBufferWriter<byte>();
        Assert.True(op.TryPartialMergeMulti("k"u8, Ops(S("a"), S("b"), S("c"), S("d")), w));
        Assert.Equal("a|b|c|d", Encoding.ASCII.GetString(w.WrittenSpan));
        Assert.Equal(3, op.Calls);
        Assert.False(op.TryPartialMergeMulti("k"u8, Ops(S("a"), S("no"), S("c")), new ArrayBufferWriter<byte>()));
        Assert.Throws<ArgumentException>(() => op.TryPartialMergeMulti("k"u8, Ops(S("a")), new ArrayBufferWriter<byte>()));
        Assert.False(new AppendWithoutPartialMerge().TryPartialMerge("k"u8, S("a"), S("b"), new ArrayBufferWriter<byte>()));
    }
}
