using KvEngine.Storage;
using Microsoft.Win32.SafeHandles;

namespace KvEngine.Table;

/// <summary>
/// The asynchronous point lookups' side of <see cref="TableReader"/>: the file's handle for a
/// block-read engine, held open (counted in <see cref="_fileUsers"/>, so the open-file limiter
/// cannot close it) from <see cref="EnterAsyncFileRead"/> until <see cref="ExitAsyncFileRead"/>.
/// See <see cref="DeferredBlockReads"/> for how a lookup defers and retries its reads.
/// </summary>
internal sealed partial class TableReader
{
    // Set once the reader is open: reads while opening are never deferred (the footer, metaindex,
    // properties and pinned metadata are read synchronously, as RocksDB's async MultiGet does).
    private bool _deferrable;

    /// <summary>The file's direct-I/O alignment (1: buffered): an engine read of it must cover aligned ranges.</summary>
    internal int FileAlignment => _alignment;

    /// <summary>
    /// Counts an asynchronous read of the file in (reopening it when the limiter closed it) and
    /// returns its handle for a block-read engine, or null when the file is not a local one (an
    /// in-memory or fault-injecting file: the caller reads it with <see cref="ReadFileForAsync"/>).
    /// Either way the caller calls <see cref="ExitAsyncFileRead"/> once the read has completed.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The reader was disposed.</exception>
    internal SafeFileHandle? EnterAsyncFileRead()
    {
        return AcquireFile() switch
        {
            LocalRandomAccessFile local => local.Handle,
            LocalDirectRandomAccessFile direct => direct.Handle,
            _ => null,
        };
    }

    /// <summary>Counts out a read counted in by <see cref="EnterAsyncFileRead"/>.</summary>
    internal void ExitAsyncFileRead() => ReleaseFile();

    /// <summary>A synchronous read of a file that has no handle, between <see cref="EnterAsyncFileRead"/> and <see cref="ExitAsyncFileRead"/>.</summary>
    internal int ReadFileForAsync(long offset, Span<byte> buffer) => _file!.Read(offset, buffer);
}
