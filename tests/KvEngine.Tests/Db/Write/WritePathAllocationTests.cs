using System.Buffers.Binary;
using KvEngine.Tests.Util;

namespace KvEngine.Tests.Db.Write;

/// <summary>
/// The write path (writer queue, WAL record, memtable insert, publication: <c>Db/Write</c> and
/// <c>Db/Logs</c>) allocates no managed memory per write in steady state, for a Put of the default
/// family, a Put of another family, a batch across families, a synced Put and a write without the
/// WAL, with the memtable large enough that no switch happens during the measured rounds.
/// </summary>
public sealed class WritePathAllocationTests : IDisposable
{
    private const int Ops = 200;
    private readonly string _dir = Path.Combine(Path.GetTempPath(), "kv-writealloc-" + Guid.NewGuid().ToString("N"));
    private readonly byte[] _key = new byte[16];
    private readonly byte[] _value = new byte[100];
    private long _next;

    public void Dispose()
    {
        if (Directory.Exists(_dir))
        {
            Directory.Delete(_dir, recursive: true);
        }
    }

    private byte[] NextKey()
    {
        long i = _next++;
        BinaryPrimitives.WriteInt64BigEndian(_key, i * 7919 % 1_000_003);
        BinaryPrimitives.WriteInt64BigEndian(_key.AsSpan(8), i);
        return _key;
    }

    [Fact]
    public void WritesAllocateNothing()
    {
        var options = new KvOptions { WriteBufferSize = 64 << 20, CreateMissingColumnFamilies = true };
        using KvDb db = KvDb.Open(_dir, options,
            [new ColumnFamilyDescriptor("default", new ColumnFamilyOptions { WriteBufferSize = 64 << 20 }),
             new ColumnFamilyDescriptor("other", new ColumnFamilyOptions { WriteBufferSize = 64 << 20 })]);
        ColumnFamilyHandle other = db.GetColumnFamily("other")!;
        var sync = new WriteOptions { Sync = true };
        var noWal = new WriteOptions { DisableWal = true };
        using var batch = new WriteBatch();

        Action puts = () =>
        {
            for (int i = 0; i < Ops; i++)
            {
                db.Put(NextKey(), _value);
            }
        };
        Action familyPuts = () =>
        {
            for (int i = 0; i < Ops; i++)
            {
                db.Put(other, NextKey(), _value);
            }
        };
        Action batches = () =>
        {
            for (int i = 0; i < Ops; i++)
            {
                batch.Clear();
                batch.Put(NextKey(), _value);
                batch.Put(other, NextKey(), _value);
                db.Write(batch);
            }
        };
        Action syncedPuts = () =>
        {
            for (int i = 0; i < 20; i++)
            {
                db.Put(NextKey(), _value, sync);
            }
        };
        Action unloggedPuts = () =>
        {
            for (int i = 0; i < Ops; i++)
            {
                db.Put(NextKey(), _value, noWal);
            }
        };

        AllocationAssert.Zero(puts, "Put", rounds: 5);
        AllocationAssert.Zero(familyPuts, "Put to a column family", rounds: 5);
        AllocationAssert.Zero(batches, "WriteBatch across families", rounds: 5);
        AllocationAssert.Zero(syncedPuts, "Sync Put", rounds: 5);
        AllocationAssert.Zero(unloggedPuts, "Put without the WAL", rounds: 5);
        Assert.Equal(0, int.Parse(db.GetProperty("rocksdb.num-immutable-mem-table")!, System.Globalization.CultureInfo.InvariantCulture));
    }
}
