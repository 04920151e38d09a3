using System.Buffers;
using System.Runtime.CompilerServices;
using KvEngine.Storage.IO;
using Microsoft.Win32.SafeHandles;

namespace KvEngine.Storage;

/// <summary>
/// Positional reads with O_DIRECT (<see cref="DirectIO"/>): the page cache is bypassed, so the
/// engine's block cache and readahead are the only caching. A read whose offset, length and buffer
/// are aligned (<see cref="Alignment"/>) goes straight into the caller's buffer; any other read
/// covers the aligned range around it in a bounce buffer and copies the bytes asked for, so every
/// offset and length is served correctly. Callers on hot paths (table block reads, readahead) ask
/// for aligned ranges in aligned buffers and take their bytes in place. Asynchronous reads go
/// through the block-read engine given, else the process's shared one, which reads into its own
/// page-aligned buffers: an aligned offset and length go to the device as asked, any other range is
/// widened to aligned bounds into a rented buffer (the call's own) and the bytes asked for copied out.
/// Thread-safe: concurrent reads are allowed (each bounce buffer is the call's own).
/// </summary>
internal sealed class LocalDirectRandomAccessFile : IAsyncRandomAccessFile
{
    private readonly SafeFileHandle _handle;
    private readonly IBlockReadEngine? _engine;

    public LocalDirectRandomAccessFile(string path, IBlockReadEngine? engine = null)
    {
        _handle = DirectIO.Open(path, write: false);
        Length = RandomAccess.GetLength(_handle);
        _engine = engine;
    }

    public long Length { get; }

    /// <summary>The open handle, for reads through a block-read engine (valid until <see cref="Dispose"/>; a read in flight holds a reference on it).</summary>
    internal SafeFileHandle Handle => _handle;

    public int Alignment => DirectIO.Alignment;

    public unsafe int Read(long offset, Span<byte> buffer)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(offset);
        if (buffer.IsEmpty)
        {
            return 0;
        }
        fixed (byte* p = buffer)
        {
            if (DirectIO.IsAligned(offset) && DirectIO.IsAligned(buffer.Length) && DirectIO.IsAligned((long)p))
            {
                return DirectIO.ReadFully(_handle, offset, buffer);
            }
        }
        long start = DirectIO.AlignDown(offset);
        long end = DirectIO.AlignUp(offset + buffer.Length);
        int skip = (int)(offset - start);
        using AlignedBuffer bounce = AlignedBuffer.Allocate(checked((int)(end - start)));
        int read = DirectIO.ReadFully(_handle, start, bounce.Span[..(int)(end - start)]);
        int useful = Math.Clamp(read - skip, 0, buffer.Length);
        bounce.Span.Slice(skip, useful).CopyTo(buffer);
        return useful;
    }

    public ValueTask<int> ReadAsync(long offset, Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(offset);
        if (buffer.IsEmpty)
        {
            return new ValueTask<int>(0);
        }
        IBlockReadEngine engine = _engine ?? BlockReadEngines.Shared;
        if (DirectIO.IsAligned(offset) && DirectIO.IsAligned(buffer.Length))
        {
            return ReadAlignedAsync(engine, offset, buffer, cancellationToken);
        }
        return ReadBouncedAsync(engine, offset, buffer, cancellationToken);
    }

    /// <summary>An aligned range: read on until full, the end of the file (0 bytes) or a read that ends short of alignment (the end of the file too).</summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<int> ReadAlignedAsync(IBlockReadEngine engine, long offset, Memory<byte> buffer, CancellationToken cancellationToken)
    {
        int total = 0;
        while (total < buffer.Length)
        {
            int n = await engine.ReadAsync(_handle, buffer[total..], offset + total, cancellationToken).ConfigureAwait(false);
            total += n;
            if (n == 0 || !DirectIO.IsAligned(n))
            {
                break;
            }
        }
        return total;
    }

    /// <summary>Any other range: the aligned range around it into a rented buffer, then the bytes asked for.</summary>
    private async ValueTask<int> ReadBouncedAsync(IBlockReadEngine engine, long offset, Memory<byte> buffer, CancellationToken cancellationToken)
    {
        long start = DirectIO.AlignDown(offset);
        long end = DirectIO.AlignUp(offset + buffer.Length);
        int skip = (int)(offset - start);
        int length = checked((int)(end - start));
        byte[] bounce = ArrayPool<byte>.Shared.Rent(length);
        try
        {
            // The engine writes the bounce buffer only before the read's ValueTask completes, so it
            // goes back to the pool safely whatever the outcome.
            int read = await ReadAlignedAsync(engine, start, bounce.AsMemory(0, length), cancellationToken).ConfigureAwait(false);
            int useful = Math.Clamp(read - skip, 0, buffer.Length);
            bounce.AsSpan(skip, useful).CopyTo(buffer.Span);
            return useful;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(bounce);
        }
    }

    public void Dispose() => _handle.Dispose();
}
