namespace KvEngine.Benchmarks.NativeBaseline;

/// <summary>
/// Benchmark baseline only (CodecBenchmarks): the native codec path KvEngine used before it moved to
/// managed packages, kept to measure the managed codecs against. Never part of the library.
///
/// The LZ4 block format through the system's liblz4 (package liblz4-1), loaded on first use.
/// Raw LZ4 blocks, no frame: what RocksDB stores for kLZ4Compression and kLZ4HCCompression.
/// Thread-safe: the library functions used keep no shared state.
/// </summary>
internal static unsafe class NativeLz4Codec
{
    private const string CodecName = "LZ4";
    private const string Package = "liblz4-1";

    private static readonly Lazy<Api> s_api = new(Load, LazyThreadSafetyMode.ExecutionAndPublication);

    /// <summary>Throws <see cref="KvException"/> naming the package when liblz4 cannot be loaded.</summary>
    public static void EnsureAvailable() => _ = s_api.Value;

    public static int CompressBound(int sourceLength) => s_api.Value.CompressBound(sourceLength);

    /// <summary>LZ4_compress_fast; returns the compressed length, 0 when it did not fit.</summary>
    public static int Compress(ReadOnlySpan<byte> source, Span<byte> destination, int acceleration)
    {
        Api api = s_api.Value;
        fixed (byte* src = source)
        fixed (byte* dst = destination)
        {
            return api.CompressFast(src, dst, source.Length, destination.Length, acceleration);
        }
    }

    /// <summary>LZ4_compress_HC; returns the compressed length, 0 when it did not fit.</summary>
    public static int CompressHC(ReadOnlySpan<byte> source, Span<byte> destination, int level)
    {
        Api api = s_api.Value;
        fixed (byte* src = source)
        fixed (byte* dst = destination)
        {
            return api.CompressHC(src, dst, source.Length, destination.Length, level);
        }
    }

    /// <summary>LZ4_decompress_safe; returns the decompressed length, negative on malformed input.</summary>
    public static int Decompress(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        Api api = s_api.Value;
        fixed (byte* src = source)
        fixed (byte* dst = destination)
        {
            return api.DecompressSafe(src, dst, source.Length, destination.Length);
        }
    }

    private static Api Load()
    {
        nint lib = NativeCodecLibrary.Load(CodecName, Package, "liblz4.so.1", "liblz4.so", "lz4");
        return new Api(
            (delegate* unmanaged<int, int>)NativeCodecLibrary.Export(lib, CodecName, Package, "LZ4_compressBound"),
            (delegate* unmanaged<byte*, byte*, int, int, int, int>)NativeCodecLibrary.Export(lib, CodecName, Package, "LZ4_compress_fast"),
            (delegate* unmanaged<byte*, byte*, int, int, int, int>)NativeCodecLibrary.Export(lib, CodecName, Package, "LZ4_compress_HC"),
            (delegate* unmanaged<byte*, byte*, int, int, int>)NativeCodecLibrary.Export(lib, CodecName, Package, "LZ4_decompress_safe"));
    }

    private sealed class Api(
        delegate* unmanaged<int, int> compressBound,
        delegate* unmanaged<byte*, byte*, int, int, int, int> compressFast,
        delegate* unmanaged<byte*, byte*, int, int, int, int> compressHC,
        delegate* unmanaged<byte*, byte*, int, int, int> decompressSafe)
    {
        public int CompressBound(int n) => compressBound(n);

        public int CompressFast(byte* src, byte* dst, int n, int cap, int acceleration) =>
            compressFast(src, dst, n, cap, acceleration);

        public int CompressHC(byte* src, byte* dst, int n, int cap, int level) => compressHC(src, dst, n, cap, level);

        public int DecompressSafe(byte* src, byte* dst, int n, int cap) => decompressSafe(src, dst, n, cap);
    }
}
