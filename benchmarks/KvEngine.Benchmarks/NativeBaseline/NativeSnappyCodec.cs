namespace KvEngine.Benchmarks.NativeBaseline;

/// <summary>
/// Benchmark baseline only (CodecBenchmarks): the native codec path KvEngine used before it moved to
/// managed packages, kept to measure the managed codecs against. Never part of the library.
///
/// Snappy through the system's libsnappy (package libsnappy1v5), loaded on first use, via its C
/// API (snappy-c.h). RocksDB stores kSnappyCompression blocks as plain Snappy output, whose own
/// varint32 header is the uncompressed length. Thread-safe: the functions keep no shared state.
/// </summary>
internal static unsafe class NativeSnappyCodec
{
    private const string CodecName = "Snappy";
    private const string Package = "libsnappy1v5";
    private const int StatusOk = 0;

    private static readonly Lazy<Api> s_api = new(Load, LazyThreadSafetyMode.ExecutionAndPublication);

    public static void EnsureAvailable() => _ = s_api.Value;

    public static long MaxCompressedLength(int sourceLength) => (long)s_api.Value.MaxCompressedLength((nuint)sourceLength);

    /// <summary>Compresses into <paramref name="destination"/>; returns the length, or 0 when it failed.</summary>
    public static long Compress(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        Api api = s_api.Value;
        nuint length = (nuint)destination.Length;
        fixed (byte* src = source)
        fixed (byte* dst = destination)
        {
            return api.Compress(src, (nuint)source.Length, dst, &length) == StatusOk ? (long)length : 0;
        }
    }

    /// <summary>Decompresses a whole Snappy buffer; returns the length written, or -1 when it is malformed.</summary>
    public static long Decompress(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        Api api = s_api.Value;
        nuint length = (nuint)destination.Length;
        fixed (byte* src = source)
        fixed (byte* dst = destination)
        {
            return api.Uncompress(src, (nuint)source.Length, dst, &length) == StatusOk ? (long)length : -1;
        }
    }

    private static Api Load()
    {
        nint lib = NativeCodecLibrary.Load(CodecName, Package, "libsnappy.so.1", "libsnappy.so", "snappy");
        return new Api(
            (delegate* unmanaged<byte*, nuint, byte*, nuint*, int>)NativeCodecLibrary.Export(lib, CodecName, Package, "snappy_compress"),
            (delegate* unmanaged<byte*, nuint, byte*, nuint*, int>)NativeCodecLibrary.Export(lib, CodecName, Package, "snappy_uncompress"),
            (delegate* unmanaged<nuint, nuint>)NativeCodecLibrary.Export(lib, CodecName, Package, "snappy_max_compressed_length"));
    }

    private sealed class Api(
        delegate* unmanaged<byte*, nuint, byte*, nuint*, int> compress,
        delegate* unmanaged<byte*, nuint, byte*, nuint*, int> uncompress,
        delegate* unmanaged<nuint, nuint> maxCompressedLength)
    {
        public int Compress(byte* src, nuint n, byte* dst, nuint* length) => compress(src, n, dst, length);

        public int Uncompress(byte* src, nuint n, byte* dst, nuint* length) => uncompress(src, n, dst, length);

        public nuint MaxCompressedLength(nuint n) => maxCompressedLength(n);
    }
}
