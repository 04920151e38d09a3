using System.Buffers;
using System.Runtime.InteropServices;
using RocksDbSharp;

namespace KvEngine.Benchmarks.Shared;

/// <summary>
/// Benchmark baseline only (compiled into kvbench and KvEngine.Benchmarks, never into src/): the
/// calls into release RocksDB that RocksDbSharp's wrapper classes only offer with a managed
/// allocation per call, made through RocksDbSharp's own C-API bindings instead. RocksDbSharp's
/// <c>RocksDb.Get(ReadOnlySpan&lt;byte&gt;)</c> (and its <c>ISpanDeserializer</c> overload, which
/// goes through it) returns a new <c>byte[]</c> per found key; <see cref="TryGet"/> uses
/// <c>rocksdb_get_pinned</c> and copies the value out of RocksDB's memory, as KvEngine's
/// <c>TryGet</c> does, with no managed allocation. Stateless and thread-safe (as the database).
/// </summary>
internal static unsafe class RocksDbCalls
{
    /// <summary>
    /// Looks <paramref name="key"/> up in the database <paramref name="db"/> (a <c>rocksdb_t*</c>)
    /// with the read options <paramref name="readOptions"/> and appends its value to
    /// <paramref name="value"/>; false when absent. A RocksDB error becomes an <see cref="IOException"/>.
    /// </summary>
    public static bool TryGet(IntPtr db, IntPtr readOptions, ReadOnlySpan<byte> key, IBufferWriter<byte> value)
    {
        IntPtr slice;
        IntPtr err;
        fixed (byte* k = key)
        {
            slice = Native.Instance.rocksdb_get_pinned(db, readOptions, k, (UIntPtr)key.Length, out err);
        }
        ThrowIfError(err);
        if (slice == IntPtr.Zero)
        {
            return false;
        }
        IntPtr p = Native.Instance.rocksdb_pinnableslice_value(slice, out UIntPtr length);
        int n = checked((int)(nuint)length);
        new ReadOnlySpan<byte>((void*)p, n).CopyTo(value.GetSpan(n));
        value.Advance(n);
        Native.Instance.rocksdb_pinnableslice_destroy(slice);
        return true;
    }

    /// <summary>Throws the error a C-API call reported in <paramref name="err"/> (and frees it); nothing when it is null.</summary>
    public static void ThrowIfError(IntPtr err)
    {
        if (err != IntPtr.Zero)
        {
            string message = Marshal.PtrToStringUTF8(err) ?? "unknown error";
            Native.Instance.rocksdb_free(err);
            throw new IOException("RocksDB: " + message);
        }
    }
}
