using System.Buffers.Binary;
using System.Diagnostics;
using KvEngine.Format;
using KvEngine.Memtable;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Memtable;

/// <summary>
/// After LevelDB's skiplist_test ConcurrentTest: one writer adds while readers iterate without
/// locks. Each entry is (user key = 8-byte big-endian k, sequence s) with a value derived from both,
/// so a reader can tell a torn or foreign entry. The writer publishes the last sequence it added;
/// a reader that read S before starting a scan must see every sequence 1..S exactly once, in order.
/// </summary>
public class MemTableConcurrencyTests
{
    private const int KeySpace = 2048;
    private const int MaxEntries = 400_000;

    private static ulong ValueFor(ulong k, ulong seq) => (k * 0x9E3779B97F4A7C15UL) ^ (seq * 0xC2B2AE3D27D4EB4FUL);

    private static ulong KeyFor(ulong seq) => (seq * 0x2545F4914F6CDD1DUL >> 40) % KeySpace;

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    public void ReadersSeeAConsistentPrefixWhileOneWriterAdds(int readers)
    {
        using var mem = new MemTable(new MemTableOptions(ArenaBlockSize: 256 << 10));
        long published = 0;
        bool writerDone = false;
        var failures = new System.Collections.Concurrent.ConcurrentQueue<string>();
        TimeSpan duration = TimeSpan.FromMilliseconds(1000);

        var writer = new Thread(() =>
        {
            try
            {
                var clock = Stopwatch.StartNew();
                Span<byte> user = stackalloc byte[8];
                Span<byte> value = stackalloc byte[8];
                for (ulong seq = 1; seq <= MaxEntries && clock.Elapsed < duration; seq++)
                {
                    ulong k = KeyFor(seq);
                    BinaryPrimitives.WriteUInt64BigEndian(user, k);
                    BinaryPrimitives.WriteUInt64LittleEndian(value, ValueFor(k, seq));
                    if (!mem.Add(seq, ValueType.Value, user, value))
                    {
                        failures.Enqueue($"duplicate at {seq}");
                    }
                    Volatile.Write(ref published, (long)seq);
                    if ((seq & 1023) == 0)
                    {
                        Thread.Yield(); // give readers on a loaded machine a chance to overlap
                    }
                }
            }
            catch (Exception e)
            {
                failures.Enqueue("writer: " + e);
            }
            finally
            {
                Volatile.Write(ref writerDone, true);
            }
        });

        long scans = 0;
        var readerThreads = new Thread[readers];
        for (int r = 0; r < readers; r++)
        {
            int readerId = r;
            readerThreads[r] = new Thread(() =>
            {
                try
                {
                    var rnd = new Random(readerId);
                    bool lastRound = false;
                    while (!lastRound)
                    {
                        lastRound = Volatile.Read(ref writerDone);
                        Scan(mem, (ulong)Volatile.Read(ref published), backwards: rnd.Next(4) == 0);
                        Seeks(mem, rnd);
                        Interlocked.Increment(ref scans);
                    }
                }
                catch (Exception e)
                {
                    failures.Enqueue($"reader {readerId}: {e}");
                }
            });
        }

        writer.Start();
        foreach (Thread t in readerThreads)
        {
            t.Start();
        }
        writer.Join();
        foreach (Thread t in readerThreads)
        {
            t.Join();
        }

        Assert.Empty(failures);
        Assert.True(scans >= readers, $"only {scans} scans");
        Assert.True(Volatile.Read(ref published) > 1000);
        Scan(mem, (ulong)published, backwards: false);
    }

    /// <summary>Walks the whole table checking order, well-formedness and that 1..atLeast are all there.</summary>
    private static void Scan(MemTable mem, ulong atLeast, bool backwards)
    {
        using var it = mem.NewIterator();
        Span<byte> previous = stackalloc byte[16];
        bool first = true;
        ulong seen = 0;
        if (backwards)
        {
            it.SeekToLast();
        }
        else
        {
            it.SeekToFirst();
        }
        int steps = 0;
        while (it.Valid)
        {
            ReadOnlySpan<byte> key = it.Key;
            CheckEntry(key, it.Value);
            if (!first)
            {
                int c = InternalKeyComparer.Compare(previous, key);
                if (backwards ? c <= 0 : c >= 0)
                {
                    throw new InvalidOperationException($"out of order at step {steps}");
                }
            }
            key.CopyTo(previous);
            first = false;
            if (InternalKeys.Sequence(key) <= atLeast)
            {
                seen++;
            }
            steps++;
            if (backwards)
            {
                it.Prev();
                if (steps == 20000)
                {
                    break; // Prev is a search per step: keep backward scans short
                }
            }
            else
            {
                it.Next();
            }
        }
        if (!backwards && seen != atLeast)
        {
            throw new InvalidOperationException($"saw {seen} of the {atLeast} entries published before the scan");
        }
    }

    private static void Seeks(MemTable mem, Random rnd)
    {
        using var it = mem.NewIterator();
        Span<byte> target = stackalloc byte[16];
        Span<byte> found = stackalloc byte[16];
        for (int i = 0; i < 200; i++)
        {
            BinaryPrimitives.WriteUInt64BigEndian(target, (ulong)rnd.Next(KeySpace));
            BinaryPrimitives.WriteUInt64LittleEndian(target[8..], InternalKeys.PackTrailer((ulong)rnd.Next(MaxEntries), ValueType.ValueTypeForSeek));
            it.Seek(target);
            if (!it.Valid)
            {
                continue;
            }
            CheckEntry(it.Key, it.Value);
            if (InternalKeyComparer.Compare(it.Key, target) < 0)
            {
                throw new InvalidOperationException("Seek landed before its target");
            }
            it.Key.CopyTo(found);
            it.Prev();
            if (it.Valid && InternalKeyComparer.Compare(it.Key, found) >= 0)
            {
                throw new InvalidOperationException("Prev did not step back");
            }
        }
    }

    private static void CheckEntry(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
    {
        if (key.Length != 16 || value.Length != 8 || InternalKeys.Type(key) != ValueType.Value)
        {
            throw new InvalidOperationException($"malformed entry: key {key.Length} bytes, value {value.Length} bytes");
        }
        ulong k = BinaryPrimitives.ReadUInt64BigEndian(key);
        ulong seq = InternalKeys.Sequence(key);
        if (k != KeyFor(seq) || BinaryPrimitives.ReadUInt64LittleEndian(value) != ValueFor(k, seq))
        {
            throw new InvalidOperationException($"entry (k {k}, seq {seq}) does not match its contents");
        }
    }
}
