using System.Buffers;
using System.Buffers.Binary;
using KvEngine.Tests.Util;

namespace KvEngine.Tests.Merge;

/// <summary>
/// Merged reads allocate no managed memory per operation in steady state: Gets and iterator steps
/// over keys whose operands lie in the memtable, in level 0 and over a base value in level 1
/// (uint64add counters).
/// </summary>
public sealed class MergeAllocationTests : IDisposable
{
    private const int Keys = 2_000;
    private readonly string _dir = Path.Combine(Path.GetTempPath(), "kv-mergealloc-" + Guid.NewGuid().ToString("N"));
    private readonly byte[] _key = new byte[8];
    private readonly ArrayBufferWriter<byte> _value = new(64);

    public void Dispose()
    {
        if (Directory.Exists(_dir))
        {
            Directory.Delete(_dir, recursive: true);
        }
    }

    private byte[] Key(long i)
    {
        BinaryPrimitives.WriteInt64BigEndian(_key, i);
        return _key;
    }

    [Fact]
    public void MergedGetsAndIterationAllocateNothing()
    {
        using KvDb db = KvDb.Open(_dir, new KvOptions { MergeOperator = UInt64AddOperator.Instance, WriteBufferSize = 4 << 20 });
        for (long i = 0; i < Keys; i++)
        {
            db.Put(Key(i), UInt64AddOperator.Encode(100));
        }
        db.Flush();
        db.CompactRange(null, null); // bases in level 1
        for (long i = 0; i < Keys; i++)
        {
            db.Merge(Key(i), UInt64AddOperator.Encode(10));
        }
        db.Flush(); // operands in level 0
        for (long i = 0; i < Keys; i++)
        {
            db.Merge(Key(i), UInt64AddOperator.Encode(1));
        }
        byte[] expected = UInt64AddOperator.Encode(111);

        void Gets()
        {
            for (long i = 0; i < Keys; i++)
            {
                _value.ResetWrittenCount();
                if (!db.TryGet(Key(i), _value) || !_value.WrittenSpan.SequenceEqual(expected))
                {
                    throw new InvalidOperationException($"key {i}: wrong merged value");
                }
            }
        }

        Gets();
        AllocationAssert.Zero(Gets, "Get of merged keys");

        using KvIterator it = db.NewIterator();
        void Scan()
        {
            int n = 0;
            for (it.SeekToFirst(); it.Valid; it.Next())
            {
                if (!it.Value.SequenceEqual(expected))
                {
                    throw new InvalidOperationException("wrong merged value in a scan");
                }
                n++;
            }
            for (it.SeekToLast(); it.Valid; it.Prev())
            {
                n--;
            }
            if (n != 0)
            {
                throw new InvalidOperationException("forward and backward scans differ");
            }
        }

        Scan();
        AllocationAssert.Zero(Scan, "scans over merged keys");
    }
}
