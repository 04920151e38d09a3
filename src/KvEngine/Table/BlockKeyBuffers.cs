using System.Buffers;
using KvEngine.Util;

namespace KvEngine.Table;

/// <summary>
/// The key buffers <see cref="BlockCursor"/>s decode keys into: <see cref="InitialSize"/> bytes,
/// grown from <see cref="ArrayPool{T}.Shared"/> for longer keys. Buffers of the common size go back
/// to this thread: two spare slots (a Get holds an index and a data cursor at once), then this
/// thread's <see cref="ThreadLocalPool{T}"/>, where the next cursor takes them
/// (<see cref="ArrayPool{T}.Shared"/>'s per-core stacks can be emptied by other threads between a
/// cursor's return and the next rent: it allocated under parallel load); grown buffers go back to
/// the shared pool they came from. The slots are plain thread statics, one load each, where the
/// pool's shared generic code looks its thread statics up (see <see cref="Block"/>'s Rent).
/// Thread-safe: every slot is the calling thread's own.
/// </summary>
internal static class BlockKeyBuffers
{
    /// <summary>Bytes of a new key buffer.</summary>
    public const int InitialSize = 64;

    [ThreadStatic]
    private static byte[]? t_spare0;

    [ThreadStatic]
    private static byte[]? t_spare1;

    /// <summary>A buffer of <see cref="InitialSize"/> bytes, recycled when this thread has one.</summary>
    public static byte[] Rent()
    {
        byte[]? key = t_spare0;
        if (key != null)
        {
            t_spare0 = null;
            return key;
        }
        key = t_spare1;
        if (key != null)
        {
            t_spare1 = null;
            return key;
        }
        return ThreadLocalPool<byte[]>.TryRent() ?? new byte[InitialSize];
    }

    /// <summary>Takes back a buffer from <see cref="Rent"/>, or one grown from the shared pool; the caller no longer uses it.</summary>
    public static void Return(byte[] key)
    {
        if (key.Length != InitialSize)
        {
            ArrayPool<byte>.Shared.Return(key);
        }
        else if (t_spare0 == null)
        {
            t_spare0 = key;
        }
        else if (t_spare1 == null)
        {
            t_spare1 = key;
        }
        else
        {
            ThreadLocalPool<byte[]>.Return(key);
        }
    }
}
