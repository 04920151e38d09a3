using KvEngine.Table;
using KvEngine.Util;

namespace KvEngine.Db.Read;

/// <summary>
/// The pooled state of one asynchronous point lookup or batch (<see cref="DbImpl.TryGetAsync"/>,
/// <see cref="DbImpl.GetAsync"/>, <see cref="DbImpl.MultiGetAsync"/>): its
/// <see cref="DeferredBlockReads"/>, the value buffer of GetAsync, and the keys a batch still has
/// to finish. Rented from the thread's spare (no lock: a lookup that completes synchronously
/// touches nothing shared), else from a small shared pool, else new; returned when the operation
/// ends, its fetched buffers back in the array pool. So a lookup allocates nothing once warm.
/// Thread-safety: one operation owns a context at a time; the pool is under its lock.
/// </summary>
internal sealed class AsyncPointReadContext
{
    private const int PoolSize = 64;
    private const int MaxRetainedValueBytes = 1 << 20;

    [ThreadStatic]
    private static AsyncPointReadContext? t_spare;

    private static readonly object s_poolLock = new();
    private static readonly AsyncPointReadContext[] s_pool = new AsyncPointReadContext[PoolSize];
    private static int s_poolCount;

    private int[] _keys = new int[32];

    public DeferredBlockReads Reads { get; } = new();

    /// <summary>GetAsync's value (cleared on rent).</summary>
    public ByteBuffer Value { get; private set; } = new(256);

    /// <summary>The batch's unfinished key indices (see <see cref="StartKeys"/>).</summary>
    public int[] Keys => _keys;

    public static AsyncPointReadContext Rent()
    {
        AsyncPointReadContext? ctx = t_spare;
        if (ctx != null)
        {
            t_spare = null;
            return ctx;
        }
        lock (s_poolLock)
        {
            if (s_poolCount > 0)
            {
                ctx = s_pool[--s_poolCount];
                s_pool[s_poolCount] = null!;
                return ctx;
            }
        }
        return new AsyncPointReadContext();
    }

    /// <summary>Every key of a batch of <paramref name="count"/> unfinished: <see cref="Keys"/>[0..count) = 0..count-1.</summary>
    public int StartKeys(int count)
    {
        if (_keys.Length < count)
        {
            _keys = new int[Math.Max(count, _keys.Length * 2)];
        }
        for (int i = 0; i < count; i++)
        {
            _keys[i] = i;
        }
        return count;
    }

    /// <summary>Ends the operation: buffers back to their pools, the context to the thread's spare slot or the shared pool.</summary>
    public void Return()
    {
        Reads.Clear();
        Value.Clear();
        if (Value.Capacity > MaxRetainedValueBytes)
        {
            Value.Dispose(); // a large value's buffer is not kept by an idle context
            Value = new ByteBuffer(256);
        }
        if (t_spare == null)
        {
            t_spare = this;
            return;
        }
        lock (s_poolLock)
        {
            if (s_poolCount < PoolSize)
            {
                s_pool[s_poolCount++] = this;
            }
        }
    }
}
