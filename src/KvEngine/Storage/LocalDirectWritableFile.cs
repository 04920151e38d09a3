using Microsoft.Win32.SafeHandles;

namespace KvEngine.Storage;

/// <summary>
/// An append-only file written with O_DIRECT (<see cref="DirectIO"/>; RocksDB's
/// use_direct_io_for_flush_and_compaction), through an aligned buffer of <see cref="BufferSize"/>
/// bytes (RocksDB's writable_file_max_buffer_size): full buffers are written whole; a
/// <see cref="Flush"/> writes the last partial sector padded with zeros and keeps it buffered, to be
/// written again over its padding at the same offset once more bytes follow (RocksDB's
/// WritableFileWriter::WriteDirect). The file on disk is then longer than <see cref="Size"/>;
/// <see cref="Sync"/> and <see cref="Dispose"/> cut it to its true length (RocksDB's
/// PosixWritableFile::Close truncates), so a synced or closed file holds exactly the bytes appended.
/// Owner: the single writer that created it; not thread-safe.
/// <para>
/// Invariants: bytes [0, _written) are on disk at their offsets, _written is aligned;
/// _buffer[0.._buffered) are the bytes that follow them; _padded: the file on disk extends past
/// <see cref="Size"/> with padding.
/// </para>
/// </summary>
internal sealed class LocalDirectWritableFile : IWritableFile
{
    public const int BufferSize = 1 << 20;

    private readonly SafeFileHandle _handle;
    private AlignedBuffer _buffer;
    private int _buffered;
    private long _written;
    private bool _padded;

    public LocalDirectWritableFile(string path)
    {
        _handle = DirectIO.Open(path, write: true);
        _buffer = AlignedBuffer.Allocate(BufferSize);
    }

    public long Size => _written + _buffered;

    public void Append(ReadOnlySpan<byte> data)
    {
        ObjectDisposedException.ThrowIf(_handle.IsClosed, this);
        while (!data.IsEmpty)
        {
            int n = Math.Min(data.Length, BufferSize - _buffered);
            data[..n].CopyTo(_buffer.Span[_buffered..]);
            _buffered += n;
            data = data[n..];
            if (_buffered == BufferSize)
            {
                RandomAccess.Write(_handle, _buffer.Span, _written);
                _written += BufferSize;
                _buffered = 0;
                _padded = false; // a whole buffer overwrote any padding
            }
        }
    }

    /// <summary>
    /// Hands every byte appended to the operating system: the whole sectors, then the partial last
    /// one padded with zeros (kept in the buffer, moved to its start, to be rewritten).
    /// </summary>
    public void Flush()
    {
        ObjectDisposedException.ThrowIf(_handle.IsClosed, this);
        if (_buffered == 0)
        {
            return;
        }
        int whole = (int)DirectIO.AlignDown(_buffered);
        int tail = _buffered - whole;
        int length = (int)DirectIO.AlignUp(_buffered);
        Span<byte> span = _buffer.Span;
        span[_buffered..length].Clear();
        RandomAccess.Write(_handle, span[..length], _written);
        _padded = tail != 0;
        if (whole > 0)
        {
            span.Slice(whole, tail).CopyTo(span);
            _written += whole;
            _buffered = tail;
        }
    }

    /// <summary>Flushes, cuts the padding off, then makes the bytes durable (fdatasync, as <see cref="LocalWritableFile.Sync"/>).</summary>
    public void Sync()
    {
        Flush();
        TruncatePadding();
        LocalWritableFile.SyncData(_handle);
    }

    private void TruncatePadding()
    {
        if (_padded)
        {
            RandomAccess.SetLength(_handle, Size);
            _padded = false;
        }
    }

    public void Dispose()
    {
        if (_handle.IsClosed)
        {
            return;
        }
        try
        {
            Flush();
            TruncatePadding();
        }
        finally
        {
            _handle.Dispose();
            _buffer.Dispose();
        }
    }
}
