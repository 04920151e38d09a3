using System.Buffers.Binary;

namespace KvEngine.Tests.Db;

/// <summary>
/// A database whose memtables sit on transparent huge pages (a write buffer of 32 MiB, so arena
/// blocks of one huge page where the kernel offers them) holds the same data as one on small
/// pages: two writers inserting concurrently across many arena blocks, overwrites, reads from the
/// memtable, a flush and a reopen. Where THP is off the two runs take the same path, and still must agree.
/// </summary>
public class HugePageMemTableTests : IDisposable
{
    private const int KeysPerWriter = 40_000;
    private const int ValueLength = 100;

    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-hugepages-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void MemtablesAcrossManyBlocksReadBackBeforeAndAfterFlushAndReopen(bool hugePages)
    {
        string path = Path.Combine(_dir.FullName, hugePages ? "huge" : "small");
        var options = new KvOptions { WriteBufferSize = 32 << 20, MemTableHugePages = hugePages, AllowConcurrentMemtableWrite = true };
        using (KvDb db = KvDb.Open(path, options))
        {
            // Two writers at once: ~10 MB of entries, five or more 2 MiB blocks, allocated concurrently.
            Parallel.For(0, 2, writer =>
            {
                for (int i = 0; i < KeysPerWriter; i++)
                {
                    int k = (i * 2) + writer;
                    db.Put(Key(k), Value(k, generation: 0));
                }
            });
            for (int k = 0; k < 2 * KeysPerWriter; k += 7)
            {
                db.Put(Key(k), Value(k, generation: 1));
            }
            Assert.Equal("0", db.GetProperty("rocksdb.num-immutable-mem-table"));
            Verify(db);
            db.Flush();
            Verify(db);
        }
        using (KvDb db = KvDb.Open(path, options))
        {
            Verify(db);
        }
    }

    private static void Verify(KvDb db)
    {
        for (int k = 0; k < 2 * KeysPerWriter; k++)
        {
            Assert.Equal(Value(k, Generation(k)), db.Get(Key(k)));
        }
        using KvIterator it = db.NewIterator();
        int expected = 0;
        for (it.SeekToFirst(); it.Valid; it.Next())
        {
            Assert.Equal(Key(expected), it.Key.ToArray());
            Assert.Equal(Value(expected, Generation(expected)), it.Value.ToArray());
            expected++;
        }
        Assert.Equal(2 * KeysPerWriter, expected);
    }

    private static int Generation(int k) => k % 7 == 0 ? 1 : 0;

    private static byte[] Key(int k)
    {
        byte[] key = new byte[16];
        BinaryPrimitives.WriteInt64BigEndian(key, k);
        return key;
    }

    private static byte[] Value(int k, int generation)
    {
        byte[] value = new byte[ValueLength];
        for (int i = 0; i < value.Length; i++)
        {
            value[i] = (byte)((k * 31) + i + (generation * 101));
        }
        return value;
    }
}
