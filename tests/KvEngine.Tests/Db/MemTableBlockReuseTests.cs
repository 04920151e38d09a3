using System.Buffers.Binary;
using KvEngine.Db;
using KvEngine.Db.State;

namespace KvEngine.Tests.Db;

/// <summary>
/// A family's memtables after the first take the blocks of the flushed ones
/// (<see cref="Memtable.ArenaBlockRecycler"/>), and the data written through them reads back
/// the same from the memtables, after flushes and after a reopen, on small pages and on huge ones.
/// </summary>
public class MemTableBlockReuseTests : IDisposable
{
    private const int Keys = 60_000;
    private const int ValueLength = 200;

    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-blockreuse-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void LaterMemTablesReuseFlushedBlocksAndReadBack(bool hugePages)
    {
        string path = Path.Combine(_dir.FullName, hugePages ? "huge" : "small");
        // 16 MiB write buffers: arena blocks of one huge page where the kernel offers them, else 1 MiB.
        var options = new KvOptions { WriteBufferSize = 16 << 20, MemTableHugePages = hugePages, AllowConcurrentMemtableWrite = true };
        using (KvDb db = KvDb.Open(path, options))
        {
            ColumnFamilyData cfd = db.Impl.DefaultFamily;
            for (int generation = 0; generation < 4; generation++)
            {
                // ~15 MB a generation: four memtables and more, each flushed while the next fills.
                Parallel.For(0, 2, writer =>
                {
                    for (int k = writer; k < Keys; k += 2)
                    {
                        db.Put(Key(k), Value(k, generation));
                    }
                });
                VerifyAll(db, generation);
            }
            db.Flush();
            Assert.True(cfd.ReusedMemTableBlocks > 0, "no memtable took a flushed memtable's block");
            Assert.True(cfd.SpareMemTableBytes + cfd.Mem.ApproximateMemoryUsage <= options.WriteBufferSize + (2 << 20));
            VerifyAll(db, generation: 3);
        }
        using (KvDb db = KvDb.Open(path, options))
        {
            VerifyAll(db, generation: 3);
        }
    }

    private static void VerifyAll(KvDb db, int generation)
    {
        for (int k = 0; k < Keys; k++)
        {
            Assert.Equal(Value(k, generation), db.Get(Key(k)));
        }
    }

    private static byte[] Key(int k)
    {
        byte[] key = new byte[16];
        BinaryPrimitives.WriteInt64BigEndian(key, (long)k * 2654435761 % 1_000_003);
        return key;
    }

    private static byte[] Value(int k, int generation)
    {
        byte[] value = new byte[ValueLength];
        for (int i = 0; i < value.Length; i++)
        {
            value[i] = (byte)((k * 31) + (i * 7) + generation);
        }
        return value;
    }
}
