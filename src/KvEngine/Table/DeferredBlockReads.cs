using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.ExceptionServices;
using KvEngine.Storage.IO;
using Microsoft.Win32.SafeHandles;

namespace KvEngine.Table;

/// <summary>
/// The file reads of one asynchronous point lookup (or batch of them): RocksDB's async MultiGet
/// idea, built on the synchronous read path instead of beside it.
/// <para>
/// An attempt runs the ordinary synchronous lookup with this object as the thread's
/// <see cref="Current"/>. Every read a <see cref="TableReader"/> makes of its file (a block-cache
/// miss, or any block read without a cache) then lands in <see cref="ServeOrDefer"/>: a range
/// this operation already fetched is served from memory (the reader then verifies, decompresses
/// and inserts into the block cache exactly as after a file read); any other is recorded as pending
/// and the attempt unwinds with <see cref="Signal"/>, releasing every lease on its way out.
/// Blocks in the cache never reach the file, so a lookup whose blocks are all cached completes in
/// its first attempt. <see cref="FetchAsync"/> then reads every pending range in one
/// <see cref="IBlockReadEngine.ReadBatch"/> (one io_uring_enter), and the caller tries again: each
/// round adds at least one fetched range, and the fetched ranges stay until <see cref="Clear"/>,
/// so a retry progresses even when the block cache is off, too small, or not filled
/// (<see cref="ReadOptions.FillCache"/> false).
/// </para>
/// <para>
/// Ranges are fetched exactly as asked (the whole block and trailer), widened to the file's
/// direct-I/O alignment for an O_DIRECT file. Buffers are rented from the shared array pool and
/// returned by <see cref="Clear"/>, only after every engine read of the round has completed (the
/// engine never writes a destination after its ValueTask completes, cancelled or not).
/// </para>
/// Thread-safety: one operation at a time; <see cref="Current"/> is per thread and set only for
/// the synchronous extent of an attempt.
/// </summary>
internal sealed class DeferredBlockReads
{
    [ThreadStatic]
    private static DeferredBlockReads? t_current;

    private PendingRead[] _pending = new PendingRead[4];
    private int _pendingCount;
    private FetchedRange[] _fetched = new FetchedRange[4];
    private int _fetchedCount;
    private BlockRead[] _reads = new BlockRead[4];
    private ValueTask<int>[] _results = new ValueTask<int>[4];
    private int[] _readSlots = new int[4];

    /// <summary>The operation whose attempt runs on this thread, or null.</summary>
    public static DeferredBlockReads? Current => t_current;

    /// <summary>What an attempt that needs an unfetched range throws (this operation's own instance).</summary>
    public BlockReadDeferredException Signal { get; } = new();

    /// <summary>Ranges recorded by the last attempt and not fetched yet.</summary>
    public int PendingCount => _pendingCount;

    /// <summary>Ranges fetched since <see cref="Clear"/>.</summary>
    public int FetchedCount => _fetchedCount;

    /// <summary>Batches handed to the engine since <see cref="Clear"/> (one per round).</summary>
    public int Batches { get; private set; }

    /// <summary>
    /// Makes this the thread's operation for one attempt and returns the one it replaces (an
    /// attempt nested in another through a callback); pass that to <see cref="Exit"/> in a finally.
    /// </summary>
    public DeferredBlockReads? Enter()
    {
        DeferredBlockReads? previous = t_current;
        t_current = this;
        return previous;
    }

    /// <summary>Ends the thread's attempt, restoring <paramref name="previous"/> (what <see cref="Enter"/> returned).</summary>
    public static void Exit(DeferredBlockReads? previous) => t_current = previous;

    /// <summary>
    /// A read <paramref name="reader"/> would make of its file: served from a fetched range
    /// (returns the count, as pread: smaller only at the end of the file), or recorded as pending,
    /// and then <see cref="Signal"/> is thrown.
    /// </summary>
    public int ServeOrDefer(TableReader reader, long offset, Span<byte> buffer)
    {
        string file = reader.FileName;
        long end = offset + buffer.Length;
        for (int i = 0; i < _fetchedCount; i++)
        {
            ref FetchedRange f = ref _fetched[i];
            if (f.Count >= 0 && offset >= f.Offset && end <= f.Offset + f.Length && string.Equals(f.File, file, StringComparison.Ordinal))
            {
                int skip = (int)(offset - f.Offset);
                int n = Math.Clamp(f.Count - skip, 0, buffer.Length);
                f.Buffer.AsSpan(skip, n).CopyTo(buffer);
                return n;
            }
        }
        for (int i = 0; i < _pendingCount; i++)
        {
            ref PendingRead p = ref _pending[i];
            if (p.Offset == offset && p.Length == buffer.Length && string.Equals(p.Reader.FileName, file, StringComparison.Ordinal))
            {
                throw Signal; // another key of the batch needs the same range
            }
        }
        if (_pendingCount == _pending.Length)
        {
            Array.Resize(ref _pending, _pending.Length * 2);
        }
        _pending[_pendingCount++] = new PendingRead(reader, offset, buffer.Length);
        throw Signal;
    }

    /// <summary>
    /// Reads every pending range: all at once through <paramref name="engine"/> (one batch), a
    /// file without a handle synchronously. Completes when every read has; the first failure
    /// (<see cref="OperationCanceledException"/> when <paramref name="cancellationToken"/> fires,
    /// an <see cref="IOException"/>, <see cref="ObjectDisposedException"/>) is rethrown then.
    /// </summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    public async ValueTask FetchAsync(IBlockReadEngine engine, CancellationToken cancellationToken)
    {
        int count = _pendingCount;
        EnsureRoundCapacity(count);
        int issued = 0;
        int first = _fetchedCount;
        Exception? error = null;
        try
        {
            for (int i = 0; i < count; i++)
            {
                PendingRead p = _pending[i];
                long start = p.Offset;
                long end = p.Offset + p.Length;
                int alignment = p.Reader.FileAlignment;
                if (alignment > 1)
                {
                    start &= ~(long)(alignment - 1);
                    end = (end + alignment - 1) & ~(long)(alignment - 1);
                }
                int length = checked((int)(end - start));
                byte[] buffer = ArrayPool<byte>.Shared.Rent(Math.Max(length, 1));
                SafeFileHandle? handle = p.Reader.EnterAsyncFileRead();
                _fetched[_fetchedCount++] = new FetchedRange(p.Reader.FileName, p.Reader, start, length, -1, buffer, Held: true);
                if (handle == null)
                {
                    ref FetchedRange f = ref _fetched[_fetchedCount - 1];
                    try
                    {
                        f.Count = p.Reader.ReadFileForAsync(start, buffer.AsSpan(0, length));
                    }
                    finally
                    {
                        f.Held = false;
                        p.Reader.ExitAsyncFileRead();
                    }
                    continue;
                }
                _reads[issued] = new BlockRead(handle, buffer.AsMemory(0, length), start);
                _readSlots[issued] = _fetchedCount - 1;
                issued++;
            }
        }
        catch (Exception e)
        {
            error = e; // issue what was prepared (each ValueTask must be awaited), then fail
        }
        if (issued > 0)
        {
            Batches++;
            engine.ReadBatch(_reads.AsSpan(0, issued), _results.AsSpan(0, issued), cancellationToken);
            for (int j = 0; j < issued; j++)
            {
                int slot = _readSlots[j];
                int read = -1;
                try
                {
                    read = await _results[j].ConfigureAwait(false);
                }
                catch (Exception e)
                {
                    error ??= e;
                }
                _results[j] = default;
                _reads[j] = default;
                Complete(slot, read);
            }
        }
        _pendingCount = 0;
        Array.Clear(_pending, 0, count);
        if (error != null)
        {
            for (int i = first; i < _fetchedCount; i++)
            {
                if (_fetched[i].Held)
                {
                    _fetched[i].Held = false;
                    _fetched[i].Reader!.ExitAsyncFileRead();
                }
                _fetched[i].Count = -1; // never served: failed, or not read
            }
            ExceptionDispatchInfo.Throw(error);
        }
        for (int i = first; i < _fetchedCount; i++)
        {
            _fetched[i].Reader = null;
        }
    }

    // Range slot's read finished with count bytes (-1: failed): its file is counted out.
    private void Complete(int slot, int count)
    {
        ref FetchedRange f = ref _fetched[slot];
        f.Count = count;
        f.Held = false;
        f.Reader!.ExitAsyncFileRead();
        f.Reader = null;
    }

    /// <summary>Returns every buffer and forgets every range (after the last round's reads completed).</summary>
    public void Clear()
    {
        for (int i = 0; i < _fetchedCount; i++)
        {
            ArrayPool<byte>.Shared.Return(_fetched[i].Buffer);
        }
        Array.Clear(_fetched, 0, _fetchedCount);
        _fetchedCount = 0;
        Array.Clear(_pending, 0, _pendingCount);
        _pendingCount = 0;
        Batches = 0;
    }

    private void EnsureRoundCapacity(int count)
    {
        if (_fetched.Length < _fetchedCount + count)
        {
            Array.Resize(ref _fetched, Math.Max(_fetched.Length * 2, _fetchedCount + count));
        }
        if (_reads.Length < count)
        {
            int size = Math.Max(_reads.Length * 2, count);
            _reads = new BlockRead[size];
            _results = new ValueTask<int>[size];
            _readSlots = new int[size];
        }
    }

    private readonly record struct PendingRead(TableReader Reader, long Offset, int Length);

    // A range read from File (Count bytes of Length asked; -1: not served). Reader is set while the
    // round that reads it is in flight; Held while that read keeps the file counted in.
    private record struct FetchedRange(string File, TableReader? Reader, long Offset, int Length, int Count, byte[] Buffer, bool Held);
}
