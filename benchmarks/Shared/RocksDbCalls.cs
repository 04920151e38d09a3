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

    [ThreadStatic]
    private static IntPtr[]? t_pointers;

    [ThreadStatic]
    private static UIntPtr[]? t_sizes;

    [ThreadStatic]
    private static IntPtr[]? t_slices;

    [ThreadStatic]
    private static IntPtr[]? t_errs;

    [ThreadStatic]
    private static MemoryHandle[]? t_pins;

    /// <summary>
    /// RocksDB's batched MultiGet (<c>rocksdb_batched_multi_get_cf</c>, what db_bench's
    /// multireadrandom calls with -multiread_batched) of <paramref name="keys"/> in the family
    /// <paramref name="family"/> (a <c>rocksdb_column_family_handle_t*</c>); each found value is
    /// copied out of its pinned slice into <paramref name="results"/>. Per-thread scratch arrays, so
    /// steady state allocates nothing.
    /// </summary>
    public static void MultiGet(IntPtr db, IntPtr readOptions, IntPtr family, ReadOnlyMemory<byte>[] keys, KvEngine.MultiGetResults results)
    {
        int n = keys.Length;
        if (t_pointers == null || t_pointers.Length < n)
        {
            t_pointers = new IntPtr[n];
            t_sizes = new UIntPtr[n];
            t_slices = new IntPtr[n];
            t_errs = new IntPtr[n];
            t_pins = new MemoryHandle[n];
        }
        IntPtr[] pointers = t_pointers;
        UIntPtr[] sizes = t_sizes!;
        IntPtr[] slices = t_slices!;
        IntPtr[] errs = t_errs!;
        MemoryHandle[] pins = t_pins!;
        try
        {
            for (int i = 0; i < n; i++)
            {
                pins[i] = keys[i].Pin();
                pointers[i] = (IntPtr)pins[i].Pointer;
                sizes[i] = (UIntPtr)keys[i].Length;
            }
            fixed (IntPtr* k = pointers)
            fixed (UIntPtr* z = sizes)
            fixed (IntPtr* v = slices)
            {
                Native.Instance.rocksdb_batched_multi_get_cf(db, readOptions, family, (UIntPtr)n, (IntPtr)k, (IntPtr)z, (IntPtr)v, errs, 0);
            }
        }
        finally
        {
            for (int i = 0; i < n; i++)
            {
                pins[i].Dispose();
            }
        }
        results.Reset(n);
        for (int i = 0; i < n; i++)
        {
            ThrowIfError(errs[i]);
            if (slices[i] == IntPtr.Zero)
            {
                continue;
            }
            IntPtr p = Native.Instance.rocksdb_pinnableslice_value(slices[i], out UIntPtr length);
            int len = checked((int)(nuint)length);
            int start = results.Begin();
            new ReadOnlySpan<byte>((void*)p, len).CopyTo(results.Writer.GetSpan(len));
            results.Writer.Advance(len);
            results.Complete(i, found: true, start);
            Native.Instance.rocksdb_pinnableslice_destroy(slices[i]);
        }
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
