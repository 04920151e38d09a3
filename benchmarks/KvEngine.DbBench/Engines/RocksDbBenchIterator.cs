using RocksDbSharp;

namespace KvEngine.DbBench.Engines;

/// <summary>
/// A release-RocksDB iterator (a <c>rocksdb_iterator_t*</c>) for kvbench's workloads, driven through
/// RocksDbSharp's C-API bindings: one native call per operation, keys and values read in place as
/// spans over RocksDB's memory (valid until the next move), no managed allocation. Dispose destroys
/// the native iterator. One thread at a time.
/// </summary>
internal readonly unsafe struct RocksDbBenchIterator : IBenchIterator
{
    private readonly IntPtr _handle;

    public RocksDbBenchIterator(IntPtr handle) => _handle = handle;

    public bool Valid => Native.Instance.rocksdb_iter_valid(_handle) != 0;

    public ReadOnlySpan<byte> Key
    {
        get
        {
            IntPtr p = Native.Instance.rocksdb_iter_key(_handle, out UIntPtr length);
            return new ReadOnlySpan<byte>((void*)p, checked((int)(nuint)length));
        }
    }

    public ReadOnlySpan<byte> Value
    {
        get
        {
            IntPtr p = Native.Instance.rocksdb_iter_value(_handle, out UIntPtr length);
            return new ReadOnlySpan<byte>((void*)p, checked((int)(nuint)length));
        }
    }

    public void Seek(ReadOnlySpan<byte> key)
    {
        fixed (byte* k = key)
        {
            Native.Instance.rocksdb_iter_seek(_handle, k, (UIntPtr)key.Length);
        }
    }

    public void SeekToFirst() => Native.Instance.rocksdb_iter_seek_to_first(_handle);

    public void SeekToLast() => Native.Instance.rocksdb_iter_seek_to_last(_handle);

    public void Next() => Native.Instance.rocksdb_iter_next(_handle);

    public void Prev() => Native.Instance.rocksdb_iter_prev(_handle);

    public void Dispose() => Native.Instance.rocksdb_iter_destroy(_handle);
}
