using RocksDbSharp;

namespace KvEngine.DbBench.Engines;

/// <summary>
/// A release-RocksDB write batch (a <c>rocksdb_writebatch_t*</c>) for kvbench's workloads, filled
/// through RocksDbSharp's C-API bindings from spans (no managed allocation). Dispose destroys it.
/// One thread at a time. One column family only (the family arguments are 0: see
/// <see cref="RocksDbOptionsMapper.Validate"/>).
/// </summary>
internal readonly unsafe struct RocksDbBenchBatch : IBenchBatch
{
    public RocksDbBenchBatch(IntPtr handle) => Handle = handle;

    public IntPtr Handle { get; }

    public void Clear() => Native.Instance.rocksdb_writebatch_clear(Handle);

    public void Put(int family, ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
    {
        fixed (byte* k = key)
        fixed (byte* v = value)
        {
            Native.Instance.rocksdb_writebatch_put(Handle, k, (UIntPtr)key.Length, v, (UIntPtr)value.Length);
        }
    }

    public void Delete(int family, ReadOnlySpan<byte> key)
    {
        fixed (byte* k = key)
        {
            Native.Instance.rocksdb_writebatch_delete(Handle, k, (UIntPtr)key.Length);
        }
    }

    public void DeleteRange(int family, ReadOnlySpan<byte> begin, ReadOnlySpan<byte> end)
    {
        fixed (byte* b = begin)
        fixed (byte* e = end)
        {
            Native.Instance.rocksdb_writebatch_delete_range(Handle, b, (UIntPtr)begin.Length, e, (UIntPtr)end.Length);
        }
    }

    public void Dispose() => Native.Instance.rocksdb_writebatch_destroy(Handle);
}
