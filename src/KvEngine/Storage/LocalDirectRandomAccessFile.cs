using Microsoft.Win32.SafeHandles;

namespace KvEngine.Storage;

/// <summary>
/// Positional reads with O_DIRECT (<see cref="DirectIO"/>): the page cache is bypassed, so the
/// engine's block cache and readahead are the only caching. A read whose offset, length and buffer
/// are aligned (<see cref="Alignment"/>) goes straight into the caller's buffer; any other read
/// covers the aligned range around it in a bounce buffer and copies the bytes asked for, so every
/// offset and length is served correctly. Callers on hot paths (table block reads, readahead) ask
/// for aligned ranges in aligned buffers and take their bytes in place. Thread-safe: concurrent
/// reads are allowed (each bounce buffer is the call's own).
/// </summary>
internal sealed unsafe class LocalDirectRandomAccessFile : IRandomAccessFile
{
    private readonly SafeFileHandle _handle;

    public LocalDirectRandomAccessFile(string path)
    {
        _handle = DirectIO.Open(path, write: false);
        Length = RandomAccess.GetLength(_handle);
    }

    public long Length { get; }

    /// <summary>The open handle, for reads through a block-read engine (valid until <see cref="Dispose"/>; a read in flight holds a reference on it).</summary>
    internal SafeFileHandle Handle => _handle;

    public int Alignment => DirectIO.Alignment;

    public int Read(long offset, Span<byte> buffer)
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

    public void Dispose() => _handle.Dispose();
}
