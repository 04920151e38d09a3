using ZstdSharp.Unsafe;

namespace KvEngine.Compression;

/// <summary>
/// Zstandard at its default level (3, what RocksDB uses for kZSTD unless told otherwise) in two
/// steps: our <see cref="ZstdMatchFinder"/> turns a block into sequences, and ZstdSharp's
/// ZSTD_compressSequences, on a compression context set to level 3, encodes them into one frame
/// (content size, no checksum, single segment: what ZSTD_compressCCtx writes). A 4 KiB block of
/// half-compressible values took 19.5 us against ZstdSharp's 28.2 at the same level, and came out
/// 0.4% smaller (docs/benchmarks.md, "Codecs").
/// <para>
/// Any source length works (a longer one grows the sequence buffer for good).
/// Owns a native compression context and a sequence buffer; one per thread (the codec keeps it
/// thread-local), so not thread-safe. The finalizer frees the context of a thread that ended.
/// </para>
/// </summary>
internal sealed unsafe class ZstdSequenceCompressor : IDisposable
{
    /// <summary>
    /// The largest source the codec sends here (data blocks; larger ones, index blocks and big
    /// values, go to ZstdSharp's compressor): the sequence buffer is sized for it once
    /// (128 KiB), where sizing it for every large block kept megabytes on the GC heap.
    /// </summary>
    public const int MaxSourceLength = 32 << 10;

    private ZSTD_CCtx_s* _context;
    private ZSTD_Sequence[] _sequences = new ZSTD_Sequence[ZstdMatchFinder.MaxSequences(MaxSourceLength)];
    private byte[] _scratch = Array.Empty<byte>();

    public ZstdSequenceCompressor()
    {
        _context = Methods.ZSTD_createCCtx();
        if (_context == null)
        {
            throw new OutOfMemoryException("ZSTD_createCCtx failed.");
        }
        nuint status = Methods.ZSTD_CCtx_setParameter(_context, ZSTD_cParameter.ZSTD_c_compressionLevel, ZstdCodec.DefaultLevel);
        if (Methods.ZSTD_isError(status))
        {
            Methods.ZSTD_freeCCtx(_context);
            _context = null;
            throw new InvalidOperationException("ZSTD_c_compressionLevel was refused.");
        }
    }

    ~ZstdSequenceCompressor() => Free();

    /// <summary>One frame of <paramref name="source"/>; its length, 0 when it did not fit <paramref name="destination"/>.</summary>
    /// <remarks>
    /// ZSTD_compressSequences (ZstdSharp.Port 0.8.8) can write past a destination smaller than
    /// ZSTD_compressBound (found by ZstdSequenceCompressorTests): such a destination gets the frame
    /// through a scratch buffer of the bound, copied when it fits.
    /// </remarks>
    public int Compress(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        ObjectDisposedException.ThrowIf(_context == null, this);
        int capacity = ZstdMatchFinder.MaxSequences(source.Length);
        if (_sequences.Length < capacity)
        {
            _sequences = new ZSTD_Sequence[capacity];
        }
        int bound = ZstdCodec.CompressBound(source.Length);
        if (destination.Length >= bound)
        {
            return CompressWithRoom(source, destination);
        }
        if (_scratch.Length < bound)
        {
            _scratch = new byte[bound];
        }
        int written = CompressWithRoom(source, _scratch);
        if (written == 0 || written > destination.Length)
        {
            return 0;
        }
        _scratch.AsSpan(0, written).CopyTo(destination);
        return written;
    }

    /// <summary>Compresses into a destination of at least the bound.</summary>
    private int CompressWithRoom(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        fixed (byte* src = source)
        fixed (byte* dst = destination)
        fixed (ZSTD_Sequence* sequences = _sequences)
        {
            int count = ZstdMatchFinder.FindSequences(src, source.Length, sequences);
            nuint written = Methods.ZSTD_compressSequences(_context, dst, (nuint)destination.Length, sequences, (nuint)count, src, (nuint)source.Length);
            GC.KeepAlive(this);
            return Methods.ZSTD_isError(written) ? 0 : (int)written;
        }
    }

    public void Dispose()
    {
        Free();
        GC.SuppressFinalize(this);
    }

    private void Free()
    {
        if (_context != null)
        {
            Methods.ZSTD_freeCCtx(_context);
            _context = null;
        }
    }
}
