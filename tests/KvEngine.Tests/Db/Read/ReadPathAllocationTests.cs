using System.Buffers;
using System.Buffers.Binary;
using KvEngine.Tests.Util;

namespace KvEngine.Tests.Db.Read;

/// <summary>
/// The read paths allocate no managed memory per operation in steady state, on a database on disk
/// with data in the memtable, in level 0 and in level 1: Gets served from the memtable, from cached
/// blocks, from blocks read from disk into a block cache far smaller than the data (every Get a
/// likely miss, so blocks and cache entries come and go), Gets of absent keys, a Seek and Next on a
/// reused iterator, NewIterator itself (a pooled cursor and a spare iterator tree) and Refresh.
/// </summary>
public sealed class ReadPathAllocationTests : IDisposable
{
    private const int Keys = 20_000;
    private const int Ops = 2_000;
    private readonly string _dir = Path.Combine(Path.GetTempPath(), "kv-readalloc-" + Guid.NewGuid().ToString("N"));
    private readonly byte[] _key = new byte[16];
    private readonly ArrayBufferWriter<byte> _value = new(256);

    public void Dispose()
    {
        if (Directory.Exists(_dir))
        {
            Directory.Delete(_dir, recursive: true);
        }
    }

    private byte[] Key(long i)
    {
        BinaryPrimitives.WriteInt64BigEndian(_key, i * 7919 % (Keys * 2));
        BinaryPrimitives.WriteInt64BigEndian(_key.AsSpan(8), i);
        return _key;
    }

    private static byte[] ValueOf(long i)
    {
        byte[] v = new byte[100];
        BinaryPrimitives.WriteInt64LittleEndian(v, i);
        v.AsSpan(8).Fill((byte)i);
        return v;
    }

    /// <summary>Keys 0..Keys in level 1, keys Keys..2Keys in level 0, the odd ones again in the memtable.</summary>
    private KvDb OpenPopulated(KvBlockCache cache)
    {
        KvDb db = KvDb.Open(_dir, new KvOptions { BlockCache = cache, Compression = KvCompressionType.Lz4, WriteBufferSize = 4 << 20 });
        for (long i = 0; i < Keys; i++)
        {
            db.Put(Key(i), ValueOf(i));
        }
        db.Flush();
        db.CompactRange(null, null);
        for (long i = Keys; i < 2 * Keys; i++)
        {
            db.Put(Key(i), ValueOf(i));
        }
        db.Flush();
        for (long i = 1; i < 2 * Keys; i += 2)
        {
            db.Put(Key(i), ValueOf(i));
        }
        return db;
    }

    private void Gets(KvDb db, long first, long step, bool expectFound)
    {
        for (long n = 0; n < Ops; n++)
        {
            _value.ResetWrittenCount();
            long i = (first + (n * step)) % (2 * Keys);
            bool found = db.TryGet(expectFound ? Key(i) : AbsentKey(i), _value);
            if (found != expectFound)
            {
                throw new InvalidOperationException($"key {i}: found {found}");
            }
        }
    }

    private byte[] AbsentKey(long i)
    {
        Key(i);
        _key[15] ^= 0x80; // same prefix, a suffix no key has
        return _key;
    }

    [Fact]
    public void GetsAllocateNothingOnHitsMissesAndAbsentKeys()
    {
        using var cache = new KvBlockCache(64 << 10); // far below the data: most table Gets read a block
        using KvDb db = OpenPopulated(cache);
        long next = 0;
        AllocationAssert.Zero(() => { Gets(db, next, 2 * 7 + 1, expectFound: true); next += Ops; }, "Get, block cache misses");
        AllocationAssert.Zero(() => Gets(db, 0, 2, expectFound: true), "Get, table hits (even keys)");
        AllocationAssert.Zero(() => Gets(db, 1, 2, expectFound: true), "Get, memtable (odd keys)");
        AllocationAssert.Zero(() => Gets(db, 0, 1, expectFound: false), "Get, absent keys");
    }

    [Fact]
    public void ReusedIteratorSeeksAndNextsAllocateNothing()
    {
        using var cache = new KvBlockCache(64 << 10);
        using KvDb db = OpenPopulated(cache);
        using KvIterator it = db.NewIterator();
        long next = 0;
        AllocationAssert.Zero(
            () =>
            {
                for (int n = 0; n < Ops; n++)
                {
                    it.Seek(Key((next++ * 31) % (2 * Keys)));
                    if (!it.Valid)
                    {
                        throw new InvalidOperationException("seek found nothing");
                    }
                }
            },
            "Seek on a reused iterator");
        it.SeekToFirst();
        AllocationAssert.Zero(
            () =>
            {
                for (int n = 0; n < Ops; n++)
                {
                    if (!it.Valid)
                    {
                        it.SeekToFirst();
                    }
                    it.Next();
                }
            },
            "Next");
    }

    [Fact]
    public void NewIteratorAndRefreshAllocateNothing()
    {
        using var cache = new KvBlockCache(1 << 20);
        using KvDb db = OpenPopulated(cache);
        AllocationAssert.Zero(
            () =>
            {
                for (int n = 0; n < 100; n++)
                {
                    using KvIterator it = db.NewIterator();
                    it.Seek(Key(n));
                }
            },
            "NewIterator + Seek + Dispose");
        using KvIterator reused = db.NewIterator();
        AllocationAssert.Zero(
            () =>
            {
                for (int n = 0; n < 100; n++)
                {
                    reused.Refresh();
                    reused.Seek(Key(n));
                }
            },
            "Refresh + Seek");
    }

    /// <summary>
    /// readwhilewriting: Gets on this thread while another thread writes (small memtables, so
    /// memtable switches and flushes keep installing new read states). The reader may allocate
    /// once per state it meets (opening a newly flushed table, its first block reads), never per
    /// Get: the bytes stay far below one object per Get.
    /// </summary>
    [Fact]
    public void GetsUnderConcurrentWritesAndFlushesAllocateOnlyPerStateChange()
    {
        using var cache = new KvBlockCache(256 << 10);
        KvDb db = KvDb.Open(_dir, new KvOptions { BlockCache = cache, Compression = KvCompressionType.Lz4, WriteBufferSize = 256 << 10 });
        try
        {
            for (long i = 0; i < 2 * Keys; i++)
            {
                db.Put(Key(i), ValueOf(i));
            }
            db.Flush();
            using var stop = new CancellationTokenSource();
            var writer = new Thread(() =>
            {
                var key = new byte[16];
                byte[] value = ValueOf(7);
                for (long n = 0; !stop.IsCancellationRequested; n++)
                {
                    BinaryPrimitives.WriteInt64BigEndian(key, (n * 7919) % (Keys * 2));
                    BinaryPrimitives.WriteInt64BigEndian(key.AsSpan(8), Keys * 4 + n);
                    db.Put(key, value);
                }
            });
            writer.Start();
            try
            {
                long next = 0;
                const int rounds = 5;
                long bytes = AllocationAssert.MinAllocatedBytes(() => { Gets(db, next, 2 * 7 + 1, expectFound: true); next += Ops; }, rounds);
                Assert.True(bytes < Ops * 8, $"{bytes} bytes over {Ops} Gets under concurrent writes and flushes");
            }
            finally
            {
                stop.Cancel();
                writer.Join();
            }
        }
        finally
        {
            db.Dispose();
        }
    }
}
