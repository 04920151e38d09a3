using System.Buffers;
using System.Buffers.Binary;

namespace KvEngine.DbBench.Engines;

/// <summary>
/// A write batch for <c>-engine=lmdb</c>: LMDB has no batch object, so the puts and deletes are
/// recorded (op, key length, value length, bytes) in one growing buffer and applied in order inside
/// one write transaction by <see cref="LmdbBench.Write"/> — LMDB's atomic unit, as a RocksDB batch
/// is RocksDB's. LMDB has no range deletion: <see cref="DeleteRange"/> throws, and
/// <see cref="LmdbBench.Validate"/> refuses <c>-writes_per_range_tombstone</c> before anything runs.
/// One thread at a time.
/// </summary>
internal readonly struct LmdbBenchBatch : IBenchBatch
{
    public const byte PutOp = 1;
    public const byte DeleteOp = 2;

    private readonly ArrayBufferWriter<byte> _ops;

    public LmdbBenchBatch() => _ops = new ArrayBufferWriter<byte>(4096);

    /// <summary>The recorded operations: [op u8][key length u32][value length u32][key][value] each.</summary>
    public ReadOnlySpan<byte> Operations => _ops.WrittenSpan;

    public void Clear() => _ops.ResetWrittenCount();

    public void Put(int family, ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) => Append(PutOp, key, value);

    public void Delete(int family, ReadOnlySpan<byte> key) => Append(DeleteOp, key, default);

    public void DeleteRange(int family, ReadOnlySpan<byte> begin, ReadOnlySpan<byte> end) =>
        throw new NotSupportedException("LMDB has no range deletion; LmdbBench.Validate refuses -writes_per_range_tombstone");

    public void Dispose()
    {
    }

    private void Append(byte op, ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
    {
        Span<byte> s = _ops.GetSpan(9 + key.Length + value.Length);
        s[0] = op;
        BinaryPrimitives.WriteInt32LittleEndian(s[1..], key.Length);
        BinaryPrimitives.WriteInt32LittleEndian(s[5..], value.Length);
        key.CopyTo(s[9..]);
        value.CopyTo(s[(9 + key.Length)..]);
        _ops.Advance(9 + key.Length + value.Length);
    }
}
