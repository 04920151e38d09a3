using System.Buffers;

namespace KvEngine.Tests.Merge;

/// <summary>
/// A string-append operator that declines every partial merge (RocksDB's StringAppendTESTOperator
/// in spirit): compactions must then keep runs of operands unchanged. Thread-safe.
/// </summary>
internal sealed class AppendWithoutPartialMerge : KvMergeOperator
{
    private readonly StringAppendOperator _inner = new((byte)'+');

    public override string Name => "AppendWithoutPartialMerge";

    public override bool TryFullMerge(ReadOnlySpan<byte> key, bool hasExistingValue, ReadOnlySpan<byte> existingValue,
        IReadOnlyList<ReadOnlyMemory<byte>> operands, IBufferWriter<byte> result) =>
        _inner.TryFullMerge(key, hasExistingValue, existingValue, operands, result);
}
