using System.Runtime.InteropServices;

namespace KvEngine.Benchmarks.NativeBaseline;

/// <summary>
/// Benchmark baseline only (CodecBenchmarks): the native codec path KvEngine used before it moved to
/// managed packages, kept to measure the managed codecs against. Never part of the library.
///
/// Zstandard frames through the system's libzstd (package libzstd1), loaded on first use: what
/// RocksDB stores for kZSTD. Thread-safe: the simple (context-per-call) API keeps no shared state.
/// </summary>
internal static unsafe class NativeZstdCodec
{
    private const string CodecName = "ZSTD";
    private const string Package = "libzstd1";

    /// <summary>ZSTD_CONTENTSIZE_UNKNOWN.</summary>
    public const ulong ContentSizeUnknown = ulong.MaxValue;

    /// <summary>ZSTD_CONTENTSIZE_ERROR.</summary>
    public const ulong ContentSizeError = ulong.MaxValue - 1;

    private static readonly Lazy<Api> s_api = new(Load, LazyThreadSafetyMode.ExecutionAndPublication);

    /// <summary>Throws <see cref="KvException"/> naming the package when libzstd cannot be loaded.</summary>
    public static void EnsureAvailable() => _ = s_api.Value;

    public static nuint CompressBound(nuint sourceLength) => s_api.Value.CompressBound(sourceLength);

    /// <summary>ZSTD_compress; returns the frame length or a code for which <see cref="IsError"/> is true.</summary>
    public static nuint Compress(ReadOnlySpan<byte> source, Span<byte> destination, int level)
    {
        Api api = s_api.Value;
        fixed (byte* src = source)
        fixed (byte* dst = destination)
        {
            return api.Compress(dst, (nuint)destination.Length, src, (nuint)source.Length, level);
        }
    }

    /// <summary>ZSTD_decompress; returns the decompressed length or an error code.</summary>
    public static nuint Decompress(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        Api api = s_api.Value;
        fixed (byte* src = source)
        fixed (byte* dst = destination)
        {
            return api.Decompress(dst, (nuint)destination.Length, src, (nuint)source.Length);
        }
    }

    /// <summary>ZSTD_getFrameContentSize: the size a frame header declares, or the sentinels above.</summary>
    public static ulong GetFrameContentSize(ReadOnlySpan<byte> source)
    {
        Api api = s_api.Value;
        fixed (byte* src = source)
        {
            return api.GetFrameContentSize(src, (nuint)source.Length);
        }
    }

    public static bool IsError(nuint code) => s_api.Value.IsError(code) != 0;

    public static string GetErrorName(nuint code) =>
        Marshal.PtrToStringUTF8((nint)s_api.Value.GetErrorName(code)) ?? "unknown zstd error";

    private static Api Load()
    {
        nint lib = NativeCodecLibrary.Load(CodecName, Package, "libzstd.so.1", "libzstd.so", "zstd");
        return new Api(
            (delegate* unmanaged<nuint, nuint>)NativeCodecLibrary.Export(lib, CodecName, Package, "ZSTD_compressBound"),
            (delegate* unmanaged<byte*, nuint, byte*, nuint, int, nuint>)NativeCodecLibrary.Export(lib, CodecName, Package, "ZSTD_compress"),
            (delegate* unmanaged<byte*, nuint, byte*, nuint, nuint>)NativeCodecLibrary.Export(lib, CodecName, Package, "ZSTD_decompress"),
            (delegate* unmanaged<byte*, nuint, ulong>)NativeCodecLibrary.Export(lib, CodecName, Package, "ZSTD_getFrameContentSize"),
            (delegate* unmanaged<nuint, uint>)NativeCodecLibrary.Export(lib, CodecName, Package, "ZSTD_isError"),
            (delegate* unmanaged<nuint, byte*>)NativeCodecLibrary.Export(lib, CodecName, Package, "ZSTD_getErrorName"));
    }

    private sealed class Api(
        delegate* unmanaged<nuint, nuint> compressBound,
        delegate* unmanaged<byte*, nuint, byte*, nuint, int, nuint> compress,
        delegate* unmanaged<byte*, nuint, byte*, nuint, nuint> decompress,
        delegate* unmanaged<byte*, nuint, ulong> getFrameContentSize,
        delegate* unmanaged<nuint, uint> isError,
        delegate* unmanaged<nuint, byte*> getErrorName)
    {
        public nuint CompressBound(nuint n) => compressBound(n);

        public nuint Compress(byte* dst, nuint cap, byte* src, nuint n, int level) => compress(dst, cap, src, n, level);

        public nuint Decompress(byte* dst, nuint cap, byte* src, nuint n) => decompress(dst, cap, src, n);

        public ulong GetFrameContentSize(byte* src, nuint n) => getFrameContentSize(src, n);

        public uint IsError(nuint code) => isError(code);

        public byte* GetErrorName(nuint code) => getErrorName(code);
    }
}
