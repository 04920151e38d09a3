using System.Buffers;
using KvEngine.Tests.Db;

namespace KvEngine.Tests.RangeDel;

/// <summary>0 B per Get with range tombstones present once the lists are built.</summary>
public sealed class RangeDelAllocationTests
{
    [Fact]
    public void GetAllocatesNothingWithTombstonesInMemtablesAndTables()
    {
        var fs = DbTestUtil.NewFs();
        var options = DbTestUtil.SmallOptions(fs, writeBufferSize: 4 << 20);
        options.DisableAutoCompactions = true;
        using KvDb db = KvDb.Open("/db", options);
        for (int i = 0; i < 2000; i++)
        {
            db.Put(DbTestUtil.B($"k{i:D6}"), DbTestUtil.B($"value-{i}"));
            if (i % 2 == 1)
            {
                db.DeleteRange(DbTestUtil.B($"k{i - 1:D6}x"), DbTestUtil.B($"k{i:D6}x")); // 1000 tombstones
            }
            if (i == 999)
            {
                db.Flush(); // half of them in a table
            }
        }
        var value = new ArrayBufferWriter<byte>(64);
        byte[][] keys = Enumerable.Range(0, 2000).Select(i => DbTestUtil.B($"k{i:D6}")).ToArray();
        for (int round = 0; round < 2; round++)
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            int found = 0;
            foreach (byte[] key in keys)
            {
                value.ResetWrittenCount();
                found += db.TryGet(key, value) ? 1 : 0;
            }
            long perGet = (GC.GetAllocatedBytesForCurrentThread() - before) / keys.Length;
            Assert.Equal(1000, found); // odd keys are deleted by the tombstone starting just after the even one
            if (round == 1)
            {
                // Zero when run alone; ArrayPool.Shared may hand a parallel test run a fresh array.
                Assert.True(perGet < 16, $"{perGet} bytes allocated per Get");
            }
        }

        // Iterating through the tombstones (both directions) allocates nothing per step either.
        using KvIterator it = db.NewIterator();
        for (int round = 0; round < 2; round++)
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            int steps = 0;
            for (it.SeekToFirst(); it.Valid; it.Next())
            {
                steps++;
            }
            for (it.SeekToLast(); it.Valid; it.Prev())
            {
                steps++;
            }
            long perStep = (GC.GetAllocatedBytesForCurrentThread() - before) / steps;
            Assert.Equal(2000, steps);
            if (round == 1)
            {
                Assert.True(perStep < 16, $"{perStep} bytes allocated per iterator step");
            }
        }
    }
}
