using System.Runtime.InteropServices;

namespace KvEngine.Benchmarks.NativeBaseline;

/// <summary>
/// Benchmark baseline only (CodecBenchmarks): the native codec path KvEngine used before it moved to
/// managed packages, kept to measure the managed codecs against. Never part of the library.
///
/// Zstandard frames through the system's libzstd (package libzstd1), loaded on first use: what
/// RocksDB stores for kZSTD. Each thread keeps one compression and one decompression context for the
/// process's life (ZSTD_compressCCtx / ZSTD_decompressDCtx), as RocksDB and <c>ZstdCodec</c> keep
/// theirs: the simple API (ZSTD_compress / ZSTD_decompress) creates and frees a context per call,
/// which at a 4 KiB block costs more than the coding. Thread-safe (contexts are thread-local).
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

    [ThreadStatic]
    private static nint t_cctx;

    [ThreadStatic]
    private static nint t_dctx;

    /// <summary>Throws <see cref="KvException"/> naming the package when libzstd cannot be loaded.</summary>
    public static void EnsureAvailable() => _ = s_api.Value;

    public static nuint CompressBound(nuint sourceLength) => s_api.Value.CompressBound(sourceLength);

    /// <summary>ZSTD_compressCCtx with this thread's context; returns the frame length or a code for which <see cref="IsError"/> is true.</summary>
    public static nuint Compress(ReadOnlySpan<byte> source, Span<byte> destination, int level)
    {
        Api api = s_api.Value;
        nint cctx = t_cctx != 0 ? t_cctx : (t_cctx = api.CreateCompressionContext());
        fixed (byte* src = source)
        fixed (byte* dst = destination)
        {
            return api.Compress(cctx, dst, (nuint)destination.Length, src, (nuint)source.Length, level);
        }
    }

    /// <summary>ZSTD_decompressDCtx with this thread's context; returns the decompressed length or an error code.</summary>
    public static nuint Decompress(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        Api api = s_api.Value;
        nint dctx = t_dctx != 0 ? t_dctx : (t_dctx = api.CreateDecompressionContext());
        fixed (byte* src = source)
        fixed (byte* dst = destination)
        {
            return api.Decompress(dctx, dst, (nuint)destination.Length, src, (nuint)source.Length);
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
            (delegate* unmanaged<nint>)NativeCodecLibrary.Export(lib, CodecName, Package, "ZSTD_createCCtx"),
            (delegate* unmanaged<nint, byte*, nuint, byte*, nuint, int, nuint>)NativeCodecLibrary.Export(lib, CodecName, Package, "ZSTD_compressCCtx"),
            (delegate* unmanaged<nint>)NativeCodecLibrary.Export(lib, CodecName, Package, "ZSTD_createDCtx"),
            (delegate* unmanaged<nint, byte*, nuint, byte*, nuint, nuint>)NativeCodecLibrary.Export(lib, CodecName, Package, "ZSTD_decompressDCtx"),
            (delegate* unmanaged<byte*, nuint, ulong>)NativeCodecLibrary.Export(lib, CodecName, Package, "ZSTD_getFrameContentSize"),
            (delegate* unmanaged<nuint, uint>)NativeCodecLibrary.Export(lib, CodecName, Package, "ZSTD_isError"),
            (delegate* unmanaged<nuint, byte*>)NativeCodecLibrary.Export(lib, CodecName, Package, "ZSTD_getErrorName"));
    }

    private sealed class Api(
        delegate* unmanaged<nuint, nuint> compressBound,
        delegate* unmanaged<nint> createCCtx,
        delegate* unmanaged<nint, byte*, nuint, byte*, nuint, int, nuint> compress,
        delegate* unmanaged<nint> createDCtx,
        delegate* unmanaged<nint, byte*, nuint, byte*, nuint, nuint> decompress,
        delegate* unmanaged<byte*, nuint, ulong> getFrameContentSize,
        delegate* unmanaged<nuint, uint> isError,
        delegate* unmanaged<nuint, byte*> getErrorName)
    {
        public nuint CompressBound(nuint n) => compressBound(n);

        public nint CreateCompressionContext() => Created(createCCtx(), "ZSTD_createCCtx");

        public nint CreateDecompressionContext() => Created(createDCtx(), "ZSTD_createDCtx");

        public nuint Compress(nint cctx, byte* dst, nuint cap, byte* src, nuint n, int level) => compress(cctx, dst, cap, src, n, level);

        public nuint Decompress(nint dctx, byte* dst, nuint cap, byte* src, nuint n) => decompress(dctx, dst, cap, src, n);

        private static nint Created(nint context, string function) =>
            context != 0 ? context : throw new OutOfMemoryException(function + " returned no context.");

        public ulong GetFrameContentSize(byte* src, nuint n) => getFrameContentSize(src, n);

        public uint IsError(nuint code) => isError(code);

        public byte* GetErrorName(nuint code) => getErrorName(code);
    }
}
