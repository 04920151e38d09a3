using System.Buffers;

namespace KvEngine.Benchmarks;

/// <summary>
/// The operation loops the KvDb read benchmarks share: TryGets of a window of packed keys into a
/// reused buffer, and Next over an iterator that starts over at the end. Allocation-free (the
/// benchmarks report bytes per operation). Stateless and thread-safe; the arguments are not.
/// </summary>
internal static class ReadLoops
{
    /// <summary>TryGet of keys <paramref name="start"/> .. <paramref name="start"/> + <paramref name="count"/>; the total length of the values found.</summary>
    public static int TryGets(KvDb db, byte[] keys, int start, int count, ArrayBufferWriter<byte> output)
    {
        int found = 0;
        for (int i = 0; i < count; i++)
        {
            output.ResetWrittenCount();
            if (db.TryGet(BenchData.Key(keys, start + i), output))
            {
                found += output.WrittenCount;
            }
        }
        return found;
    }

    /// <summary><paramref name="count"/> moves with Next, seeking to the first key whenever the iterator ran off the end; the total key length seen.</summary>
    public static int Nexts(KvIterator it, int count)
    {
        int sum = 0;
        for (int i = 0; i < count; i++)
        {
            if (!it.Valid)
            {
                it.SeekToFirst();
            }
            sum += it.Key.Length;
            it.Next();
        }
        return sum;
    }

    /// <summary>The first of the next <paramref name="count"/> of <paramref name="keys"/> keys after <paramref name="next"/>, which moves on, wrapping around.</summary>
    public static int NextStart(ref int next, int count, int keys)
    {
        int start = next;
        next = (start + count) % keys;
        return start;
    }
}
