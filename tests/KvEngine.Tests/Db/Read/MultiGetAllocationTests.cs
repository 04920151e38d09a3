using System.Buffers.Binary;
using KvEngine.Tests.Util;

namespace KvEngine.Tests.Db.Read;

/// <summary>
/// MultiGet into a reused <see cref="MultiGetResults"/> allocates no managed memory in steady state,
/// per key or per batch, on a database on disk with data in the memtable, in level 0 and in level 1:
/// batches of 32 keys served from cached blocks, from blocks read from disk into a block cache far
/// smaller than the data, from the memtable, and of absent keys (with duplicates and unsorted input).
/// </summary>
public sealed class MultiGetAllocationTests : IDisposable
{
    private const int Keys = 20_000;
    private const int Batches = 100;
    private const int BatchSize = 32;
    private readonly string _dir = Path.Combine(Path.GetTempPath(), "kv-mgalloc-" + Guid.NewGuid().ToString("N"));
    private readonly ReadOnlyMemory<byte>[] _keys = new ReadOnlyMemory<byte>[BatchSize];
    private readonly byte[][] _keyBuffers = new byte[BatchSize][];
    private readonly MultiGetResults _results = new();

    public MultiGetAllocationTests()
    {
        for (int i = 0; i < BatchSize; i++)
        {
            _keyBuffers[i] = new byte[16];
        }
    }

    public void Dispose()
    {
        _results.Dispose();
        if (Directory.Exists(_dir))
        {
            Directory.Delete(_dir, recursive: true);
        }
    }

    private static void WriteKey(Span<byte> key, long i)
    {
        BinaryPrimitives.WriteInt64BigEndian(key, i * 7919 % (Keys * 2));
        BinaryPrimitives.WriteInt64BigEndian(key[8..], i);
    }

    private static byte[] Key(long i)
    {
        byte[] k = new byte[16];
        WriteKey(k, i);
        return k;
    }

    /// <summary>Keys 0..Keys in level 1, keys Keys..2Keys in level 0, the odd ones again in the memtable.</summary>
    private KvDb OpenPopulated(KvBlockCache cache)
    {
        KvDb db = KvDb.Open(_dir, new KvOptions { BlockCache = cache, Compression = KvCompressionType.Lz4, WriteBufferSize = 4 << 20 });
        byte[] value = new byte[100];
        for (long i = 0; i < Keys; i++)
        {
            db.Put(Key(i), value);
        }
        db.Flush();
        db.CompactRange(null, null);
        for (long i = Keys; i < 2 * Keys; i++)
        {
            db.Put(Key(i), value);
        }
        db.Flush();
        for (long i = 1; i < 2 * Keys; i += 2)
        {
            db.Put(Key(i), value);
        }
        return db;
    }

    // Batches of keys first + n*step (mod 2Keys), every fourth slot repeating an earlier key; absent
    // keys flip a suffix bit no key has.
    private void Run(KvDb db, long first, long step, bool expectFound)
    {
        long i = first;
        for (int b = 0; b < Batches; b++)
        {
            for (int j = 0; j < BatchSize; j++)
            {
                if (j % 4 == 3)
                {
                    _keys[j] = _keys[j - 2];
                    continue;
                }
                byte[] k = _keyBuffers[j];
                WriteKey(k, i % (2 * Keys));
                if (!expectFound)
                {
                    k[15] ^= 0x80;
                }
                _keys[j] = k;
                i += step;
            }
            db.MultiGet(_keys, _results);
            for (int j = 0; j < BatchSize; j++)
            {
                if (_results.IsFound(j) != expectFound)
                {
                    throw new InvalidOperationException($"batch {b} key {j}: found {_results.IsFound(j)}");
                }
            }
        }
    }

    [Fact]
    public void MultiGetAllocatesNothingPerKeyOnHitsMissesAndAbsentKeys()
    {
        using var cache = new KvBlockCache(64 << 10); // far below the data: most batches read blocks
        using KvDb db = OpenPopulated(cache);
        long next = 0;
        AllocationAssert.Zero(() => { Run(db, next, (2 * 7) + 1, expectFound: true); next += Batches * BatchSize; }, "MultiGet, block cache misses");
        AllocationAssert.Zero(() => Run(db, 0, 2, expectFound: true), "MultiGet, tables (even keys)");
        AllocationAssert.Zero(() => Run(db, 1, 2, expectFound: true), "MultiGet, memtable (odd keys)");
        AllocationAssert.Zero(() => Run(db, 0, 1, expectFound: false), "MultiGet, absent keys");
    }

    [Fact]
    public void KeyMayExistAllocatesNothing()
    {
        using var cache = new KvBlockCache(1 << 20);
        using KvDb db = OpenPopulated(cache);
        byte[] key = new byte[16];
        AllocationAssert.Zero(
            () =>
            {
                for (long i = 0; i < 2000; i++)
                {
                    WriteKey(key, i);
                    if (!db.KeyMayExist(key))
                    {
                        throw new InvalidOperationException($"present key {i} refuted");
                    }
                }
            },
            "KeyMayExist");
    }
}
