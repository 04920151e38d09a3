using System.Buffers.Binary;
using KvEngine.Format;
using KvEngine.Memtable;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Memtable;

/// <summary>
/// The memtable's hash index gives every point lookup the same answer as the skip-list search
/// (and both find every published write while writers insert):
/// against a twin memtable without an index (random keys with long histories, every point type,
/// lookups at every kind of sequence), under concurrent writers, and for a reader racing a writer
/// (every published write visible at once).
/// </summary>
public unsafe class MemTableHashIndexTests
{
    private static readonly ValueType[] s_pointTypes = [ValueType.Value, ValueType.Deletion, ValueType.SingleDeletion, ValueType.Merge];

    [Theory]
    [InlineData(1, 256)]   // few buckets: long chains
    [InlineData(2, 4096)]
    public void LookupsMatchTheSkipListSearch(int seed, int buckets)
    {
        var rnd = new Random(seed);
        using var indexed = new MemTable(new MemTableOptions(ArenaBlockSize: 64 << 10, HashIndexBuckets: buckets));
        using var plain = new MemTable(new MemTableOptions(ArenaBlockSize: 64 << 10));
        Assert.True(indexed.HasHashIndex);
        Assert.False(plain.HasHashIndex);
        var keys = new List<byte[]>();
        for (int i = 0; i < 3000; i++)
        {
            var key = new byte[rnd.Next(0, 12)];
            rnd.NextBytes(key);
            keys.Add(key);
        }
        keys.Add(new byte[300]); // a key long enough for a two-byte length varint
        ulong sequence = 0;
        for (int i = 0; i < 40_000; i++)
        {
            // A skewed choice: a few keys get histories far longer than MaxVersionWalk.
            byte[] key = keys[rnd.Next(4) == 0 ? rnd.Next(8) : rnd.Next(keys.Count)];
            sequence += (ulong)rnd.Next(1, 3);
            ValueType type = s_pointTypes[rnd.Next(s_pointTypes.Length)];
            var value = new byte[rnd.Next(0, 16)];
            rnd.NextBytes(value);
            Assert.True(indexed.Add(sequence, type, key, value));
            Assert.True(plain.Add(sequence, type, key, value));
            if (i % 97 == 0)
            {
                Assert.False(indexed.Add(sequence, type, key, value)); // an equal internal key goes in once
            }
        }
        for (int probe = 0; probe < 20_000; probe++)
        {
            byte[] key = rnd.Next(10) == 0 ? RandomMissingKey(rnd) : keys[rnd.Next(keys.Count)];
            ulong at = rnd.Next(3) switch
            {
                0 => sequence,
                1 => (ulong)rnd.NextInt64(0, (long)sequence + 1),
                _ => sequence - (ulong)rnd.Next(0, 40), // just under the newest versions
            };
            AssertSameLookup(indexed, plain, key, at);
        }
        foreach (byte[] key in keys.Take(8))
        {
            AssertSameLookup(indexed, plain, key, 1);
            AssertSameLookup(indexed, plain, key, InternalKeys.MaxSequenceNumber);
        }
    }

    private static byte[] RandomMissingKey(Random rnd)
    {
        var key = new byte[20]; // longer than any stored key
        rnd.NextBytes(key);
        return key;
    }

    private static void AssertSameLookup(MemTable indexed, MemTable plain, byte[] key, ulong sequence)
    {
        bool a = indexed.TryGet(key, sequence, out ValueType ta, out ReadOnlySpan<byte> va, out ulong sa);
        bool b = plain.TryGet(key, sequence, out ValueType tb, out ReadOnlySpan<byte> vb, out ulong sb);
        Assert.Equal(b, a);
        Assert.Equal(tb, ta);
        Assert.Equal(sb, sa);
        Assert.True(va.SequenceEqual(vb));

        // The merge lookup's walk: the same run of entries of the key, newest visible first.
        SkipList.Iterator ia = indexed.SeekVersions(key, sequence);
        SkipList.Iterator ib = plain.SeekVersions(key, sequence);
        while (true)
        {
            bool inA = ia.Valid && InternalKeys.UserKey(ia.Key).SequenceEqual(key);
            bool inB = ib.Valid && InternalKeys.UserKey(ib.Key).SequenceEqual(key);
            Assert.Equal(inB, inA);
            if (!inA)
            {
                break;
            }
            Assert.True(ia.Key.SequenceEqual(ib.Key));
            ia.Next();
            ib.Next();
        }
    }

    [Theory]
    [InlineData(2, 512)]
    [InlineData(4, 512)]
    [InlineData(2, 0)] // the skip-list search alone: its tower bounds under concurrent writers
    public void ConcurrentWritersIndexEveryKeysNewestEntry(int writers, int buckets)
    {
        const int perWriter = 30_000;
        const int keySpace = 2000;
        using var mem = new MemTable(new MemTableOptions(ArenaBlockSize: 64 << 10, HashIndexBuckets: buckets));
        using var start = new Barrier(writers);
        var errors = new System.Collections.Concurrent.ConcurrentQueue<Exception>();
        var threads = new Thread[writers];
        for (int w = 0; w < writers; w++)
        {
            int id = w;
            threads[w] = new Thread(() =>
            {
                try
                {
                    Span<byte> key = stackalloc byte[8];
                    Span<byte> value = stackalloc byte[8];
                    start.SignalAndWait();
                    for (int i = 0; i < perWriter; i++)
                    {
                        ulong seq = (ulong)(i * writers + id + 1);
                        BinaryPrimitives.WriteUInt64BigEndian(key, seq * 0x9E3779B97F4A7C15UL % keySpace);
                        BinaryPrimitives.WriteUInt64LittleEndian(value, seq);
                        mem.Add(seq, ValueType.Value, key, value, concurrent: true);
                    }
                }
                catch (Exception e)
                {
                    errors.Enqueue(e);
                }
            });
            threads[w].Start();
        }
        foreach (Thread t in threads)
        {
            t.Join();
        }
        mem.EndConcurrentWrites();
        Assert.Empty(errors);

        // The newest sequence of each key, computed from the writers' schedule.
        var newest = new ulong[keySpace];
        for (ulong seq = 1; seq <= (ulong)(perWriter * writers); seq++)
        {
            newest[seq * 0x9E3779B97F4A7C15UL % keySpace] = seq;
        }
        var k = new byte[8];
        for (int key = 0; key < keySpace; key++)
        {
            BinaryPrimitives.WriteUInt64BigEndian(k, (ulong)key);
            Assert.True(mem.TryGet(k, ulong.MaxValue >> 8, out _, out ReadOnlySpan<byte> v, out ulong s));
            Assert.Equal(newest[key], s);
            Assert.Equal(newest[key], BinaryPrimitives.ReadUInt64LittleEndian(v));
        }
    }

    [Theory]
    [InlineData(256)]
    [InlineData(0)] // the skip-list search alone: its tower bounds under a writer
    public void AReaderSeesEveryPublishedWriteAtOnce(int buckets)
    {
        // The writer overwrites a small key space and publishes each sequence after its add (as the
        // write path publishes LastSequence after the memtable insert); the reader reads at the
        // published sequence and must get exactly the newest write of its key up to it.
        const int writes = 200_000;
        using var mem = new MemTable(new MemTableOptions(ArenaBlockSize: 64 << 10, HashIndexBuckets: buckets));
        long published = 0;
        Exception? failure = null;
        var writer = new Thread(() =>
        {
            Span<byte> key = stackalloc byte[4];
            Span<byte> value = stackalloc byte[8];
            for (long seq = 1; seq <= writes; seq++)
            {
                BinaryPrimitives.WriteInt32BigEndian(key, KeyOf(seq));
                BinaryPrimitives.WriteInt64LittleEndian(value, seq);
                mem.Add((ulong)seq, ValueType.Value, key, value);
                Volatile.Write(ref published, seq);
            }
        });
        var reader = new Thread(() =>
        {
            try
            {
                var key = new byte[4];
                var rnd = new Random(5);
                long reads = 0;
                while (Volatile.Read(ref published) < writes || reads < 1000)
                {
                    reads++;
                    long at = Volatile.Read(ref published);
                    int k = rnd.Next(64);
                    long expected = at;
                    while (expected > 0 && KeyOf(expected) != k)
                    {
                        expected--;
                    }
                    BinaryPrimitives.WriteInt32BigEndian(key, k);
                    bool found = mem.TryGet(key, (ulong)at, out _, out ReadOnlySpan<byte> v, out ulong s);
                    if (found != (expected != 0) || (found && ((long)s != expected || BinaryPrimitives.ReadInt64LittleEndian(v) != expected)))
                    {
                        throw new Xunit.Sdk.XunitException($"key {k} at {at}: found {found}, sequence {s}, expected {expected}");
                    }
                }
            }
            catch (Exception e)
            {
                failure = e;
            }
        });
        writer.Start();
        reader.Start();
        writer.Join();
        reader.Join();
        Assert.Null(failure);
    }

    private static int KeyOf(long sequence) => (int)((ulong)sequence * 0x9E3779B97F4A7C15UL >> 58);

    [Theory]
    [InlineData(64L << 20, 1.0 / 64, 1 << 18)] // the default: 1 MiB of 4-byte buckets
    [InlineData(64L << 20, 0.0, 0)]
    [InlineData(4096, 1.0 / 64, MemTableHashIndex.MinBuckets)]
    [InlineData(1L << 40, 0.25, MemTableHashIndex.MaxBuckets)]
    [InlineData(3_000_000, 0.01, 8192)] // 7,500 buckets rounded up
    public void BucketCountFollowsTheWriteBuffer(long writeBufferSize, double ratio, int expected) =>
        Assert.Equal(expected, MemTableHashIndex.BucketsFor(writeBufferSize, ratio));

    [Theory]
    [InlineData(-0.01)]
    [InlineData(0.3)]
    [InlineData(double.NaN)]
    public void ARatioOutOfRangeIsRefused(double ratio)
    {
        var options = new KvOptions { MemTableHashIndexRatio = ratio };
        Assert.Throws<ArgumentOutOfRangeException>(() => options.ValidateFamily());
    }

    [Fact]
    public void ABucketCountThatIsNotAPowerOfTwoIsRefused()
    {
        using var arena = new Arena(4096);
        Assert.Throws<ArgumentOutOfRangeException>(() => new MemTableHashIndex(arena, 1000));
        Assert.Throws<ArgumentOutOfRangeException>(() => new MemTableHashIndex(arena, 128));
    }

    /// <summary>
    /// Entries large enough for blocks of their own (over a quarter of a 4 KiB arena block) sit
    /// beside small ones: the skip list and the index link them by arena id like any other, from
    /// one writer and from concurrent ones, and every key's newest value comes back through the
    /// index and in order through the list.
    /// </summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void EntriesInBlocksOfTheirOwnAreLinkedLikeAnyOther(bool concurrent)
    {
        using var mem = new MemTable(new MemTableOptions(ArenaBlockSize: Arena.MinBlockSize, HashIndexBuckets: MemTableHashIndex.MinBuckets));
        const int Keys = 300;
        const int Writers = 2;
        var newest = new byte[Keys][];
        var seqs = new ulong[Keys];
        void Write(int writer)
        {
            var rnd = new Random(17 + writer);
            for (int i = 0; i < 600; i++)
            {
                int k = rnd.Next(Keys);
                if (k % Writers != writer)
                {
                    continue; // each writer owns its keys: the newest version is well defined
                }
                var value = new byte[rnd.Next(3) == 0 ? rnd.Next(Arena.MinBlockSize / 4, 3 * Arena.MinBlockSize) : rnd.Next(1, 64)];
                rnd.NextBytes(value);
                ulong seq = (ulong)(i * Writers + writer + 1);
                Assert.True(mem.Add(seq, ValueType.Value, Key(k), value, concurrent));
                newest[k] = value;
                seqs[k] = seq;
            }
        }
        if (concurrent)
        {
            var threads = new Thread[Writers];
            Exception? failure = null;
            for (int w = 0; w < Writers; w++)
            {
                int writer = w;
                threads[w] = new Thread(() =>
                {
                    try
                    {
                        Write(writer);
                    }
                    catch (Exception e)
                    {
                        failure = e;
                    }
                });
                threads[w].Start();
            }
            foreach (Thread t in threads)
            {
                t.Join();
            }
            Assert.Null(failure);
            mem.EndConcurrentWrites();
        }
        else
        {
            for (int w = 0; w < Writers; w++)
            {
                Write(w);
            }
        }
        int present = 0;
        for (int k = 0; k < Keys; k++)
        {
            bool found = mem.TryGet(Key(k), InternalKeys.MaxSequenceNumber, out ValueType type, out ReadOnlySpan<byte> value, out ulong seq);
            Assert.Equal(newest[k] != null, found);
            if (found)
            {
                present++;
                Assert.Equal(ValueType.Value, type);
                Assert.Equal(seqs[k], seq);
                Assert.True(value.SequenceEqual(newest[k]));
            }
        }
        Assert.True(present > Keys / 2);
        using var it = mem.NewIterator();
        int seen = 0;
        byte[]? previous = null;
        for (it.SeekToFirst(); it.Valid; it.Next(), seen++)
        {
            byte[] current = it.Key.ToArray();
            Assert.True(previous == null || InternalKeyComparer.Compare(previous, current) < 0);
            previous = current;
        }
        Assert.Equal(mem.NumEntries, seen);
    }

    private static byte[] Key(int k) => System.Text.Encoding.ASCII.GetBytes($"key{k:D5}");
}
