using System.Buffers;
using System.Runtime.CompilerServices;
using KvEngine.Storage;

namespace KvEngine.Table;

/// <summary>
/// One asynchronous read of a table's file range into a buffer of its own (rented from
/// <see cref="ArrayPool{T}.Shared"/>), for <see cref="AsyncPrefetcher"/>: started without waiting,
/// consumed later by the iterator's thread, which waits for it only when the cursor needs its
/// bytes before the read has finished.
/// <para>
/// States: Idle (no range), InFlight (the read was issued; the slot holds a use of the table's
/// file, see <see cref="TableReader.AcquireFileForPrefetch"/>), Done (the bytes
/// [<see cref="Start"/>, +filled) are in the buffer; a failed read counts as 0 bytes, so the
/// iterator reads those blocks itself and reports the error), Abandoned (its iterator was disposed
/// while the read was in flight). An abandoned read is cancelled; the buffer stays with the slot
/// until the read completes (the engine writes a destination only before its ValueTask completes),
/// and only then goes back to the pool: no one else can see bytes landing in it late.
/// </para>
/// Thread-safety: one owner thread issues, waits and consumes; the completion runs on any thread
/// and publishes the result through <see cref="_state"/> (interlocked) and the event.
/// </summary>
internal sealed class PrefetchSlot
{
    private const int Idle = 0;
    private const int InFlight = 1;
    private const int Done = 2;
    private const int Abandoned = 3;

    /// <summary>Called on the iterator's thread just before it blocks on a read still in flight (tests observe the wait with it).</summary>
    [ThreadStatic]
    internal static Action? WaitingForReadHook;

    private readonly Action _onCompleted;
    private readonly ManualResetEventSlim _done = new(initialState: true, spinCount: 0);
    private CancellationTokenSource? _cancel;
    private ConfiguredValueTaskAwaitable<int>.ConfiguredValueTaskAwaiter _awaiter;
    private byte[]? _buffer;
    private TableReader? _table;
    private int _length;
    private int _filled;
    private int _state;

    public PrefetchSlot()
    {
        _onCompleted = OnCompleted;
    }

    /// <summary>File offset of the range's first byte.</summary>
    public long Start { get; private set; }

    /// <summary>True from the read's issue until its completion has been published.</summary>
    public bool IsInFlight => Volatile.Read(ref _state) == InFlight;

    /// <summary>True when the slot holds (or is reading) a range of <paramref name="table"/> that begins at <paramref name="start"/>.</summary>
    public bool BeginsAt(TableReader table, long start) => _state is InFlight or Done && ReferenceEquals(_table, table) && Start == start;

    /// <summary>True when the slot's asked range of <paramref name="table"/> contains [<paramref name="offset"/>, +<paramref name="length"/>).</summary>
    public bool Covers(TableReader table, long offset, int length) =>
        _state is InFlight or Done && ReferenceEquals(_table, table) && offset >= Start && offset + length <= Start + _length;

    /// <summary>True when the slot's asked range of <paramref name="table"/> shares a byte with [<paramref name="offset"/>, +<paramref name="length"/>).</summary>
    public bool Overlaps(TableReader table, long offset, int length) =>
        _state is InFlight or Done && ReferenceEquals(_table, table) && offset < Start + _length && Start < offset + length;

    /// <summary>
    /// Issues the read of [<paramref name="start"/>, +<paramref name="length"/>) of <paramref name="file"/>,
    /// a use of <paramref name="table"/>'s file the slot ends when the read completes. Idle or Done only.
    /// </summary>
    public void Begin(TableReader table, IRandomAccessFile file, long start, int length)
    {
        if (_buffer == null || _buffer.Length < length)
        {
            if (_buffer != null)
            {
                ArrayPool<byte>.Shared.Return(_buffer);
            }
            _buffer = null;
            _buffer = ArrayPool<byte>.Shared.Rent(length);
        }
        _table = table;
        Start = start;
        _length = length;
        _filled = 0;
        _done.Reset();
        Volatile.Write(ref _state, InFlight);
        _cancel ??= new CancellationTokenSource();
        ValueTask<int> read;
        try
        {
            read = file.ReadAsync(start, _buffer.AsMemory(0, length), _cancel.Token);
        }
        catch (Exception e) when (e is IOException or ObjectDisposedException or KvException or ArgumentException)
        {
            read = ValueTask.FromException<int>(e);
        }
        _awaiter = read.ConfigureAwait(false).GetAwaiter();
        if (_awaiter.IsCompleted)
        {
            OnCompleted();
        }
        else
        {
            _awaiter.UnsafeOnCompleted(_onCompleted);
        }
    }

    /// <summary>
    /// The bytes [<paramref name="offset"/>, +<paramref name="length"/>) of <paramref name="table"/>
    /// when the slot's range covers them: waits for a read in flight, then false when the read failed
    /// or ended before them (the caller reads them itself).
    /// </summary>
    public bool TryGet(TableReader table, long offset, int length, out ReadOnlySpan<byte> bytes)
    {
        bytes = default;
        if (!Covers(table, offset, length))
        {
            return false;
        }
        if (Volatile.Read(ref _state) == InFlight)
        {
            WaitingForReadHook?.Invoke();
            _done.Wait();
        }
        if (offset + length > Start + _filled)
        {
            return false;
        }
        bytes = new ReadOnlySpan<byte>(_buffer, (int)(offset - Start), length);
        return true;
    }

    /// <summary>Where the read bytes end when they hold the byte before <paramref name="blockEnd"/> of <paramref name="table"/> (completed reads only); -1 otherwise.</summary>
    public long EndIfHoldsEnd(TableReader table, long blockEnd) =>
        Volatile.Read(ref _state) == Done && ReferenceEquals(_table, table) && blockEnd > Start && blockEnd <= Start + _filled ? Start + _filled : -1;

    /// <summary>The completed read's bytes from <paramref name="offset"/> of <paramref name="table"/> to its end, when it holds <paramref name="offset"/>.</summary>
    public bool TryGetHead(TableReader table, long offset, out ReadOnlySpan<byte> head)
    {
        if (Volatile.Read(ref _state) == Done && ReferenceEquals(_table, table) && offset >= Start && offset < Start + _filled)
        {
            head = new ReadOnlySpan<byte>(_buffer, (int)(offset - Start), (int)(Start + _filled - offset));
            return true;
        }
        head = default;
        return false;
    }

    /// <summary>
    /// The owner lets go of the slot: an idle or completed slot returns its buffer and may be used
    /// again (true); a read in flight is cancelled and the slot is abandoned to it (false: the
    /// completion returns the buffer; the owner must not use the slot again).
    /// </summary>
    public bool Release()
    {
        if (Interlocked.CompareExchange(ref _state, Abandoned, InFlight) == InFlight)
        {
            _cancel!.Cancel();
            return false;
        }
        Volatile.Write(ref _state, Idle);
        _table = null;
        if (_buffer != null)
        {
            ArrayPool<byte>.Shared.Return(_buffer);
            _buffer = null;
        }
        return true;
    }

    private void OnCompleted()
    {
        int filled;
        try
        {
            filled = _awaiter.GetResult();
        }
        catch (Exception)
        {
            filled = 0; // whatever failed, the iterator reads these blocks synchronously and reports the error then
        }
        _awaiter = default;
        TableReader table = _table!;
        _filled = filled;
        table.ReleaseFileForPrefetch();
        if (Interlocked.CompareExchange(ref _state, Done, InFlight) == Abandoned)
        {
            // The iterator is gone: the read can no longer write the buffer (its ValueTask completed).
            _table = null;
            byte[]? buffer = _buffer;
            _buffer = null;
            if (buffer != null)
            {
                ArrayPool<byte>.Shared.Return(buffer);
            }
            _cancel?.Dispose();
            return;
        }
        _done.Set();
    }
}
