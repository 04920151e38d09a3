using System.Text;
using KvEngine.Storage;
using KvEngine.Table;

namespace KvEngine.Tests.Table;

/// <summary>
/// Iterator readahead (RocksDB's automatic readahead): the counting rule of <see cref="Readahead"/>,
/// and a table scan that reads its data blocks in a few large reads instead of one per block, with
/// the same keys and values, checksums still verified.
/// </summary>
public class ReadaheadTests
{
    [Fact]
    public void ReadsAheadFromTheThirdSequentialBlockAndDoublesUpToTheMaximum()
    {
        var r = default(Readahead);
        r.Reset();
        try
        {
            r.Track(0, 100);
            Assert.Equal(0, r.Plan(100, 1 << 30));
            r.Track(100, 100);
            Assert.Equal(0, r.Plan(100, 1 << 30));
            r.Track(200, 100); // the second read that follows the previous one
            Assert.Equal(Readahead.InitialSize, r.Plan(100, 1 << 30));
            r.Filled(r.Prepare(200, Readahead.InitialSize, 1, out _).Length);
            Assert.True(r.TryGet(200, 100, out ReadOnlySpan<byte> first));
            Assert.Equal(100, first.Length);
            long offset = 300;
            for (; offset + 100 <= 200 + Readahead.InitialSize; offset += 100)
            {
                r.Track(offset, 100); // served from the buffer, still counted as sequential
                Assert.True(r.TryGet(offset, 100, out _));
            }
            r.Track(offset, 100);
            Assert.False(r.TryGet(offset, 100, out _)); // straddles the buffer's end
            Assert.Equal(2 * Readahead.InitialSize, r.Plan(100, 1 << 30));
            Assert.Equal(4 * Readahead.InitialSize, r.Plan(100, 1 << 30)); // each refill doubles
            Assert.Equal(8 * Readahead.InitialSize, r.Plan(100, 1 << 30));
            Assert.Equal(16 * Readahead.InitialSize, r.Plan(100, 1 << 30));
            Assert.Equal(Readahead.MaxSize, r.Plan(100, 1 << 30));
            Assert.Equal(Readahead.MaxSize, r.Plan(100, 1 << 30));
            Assert.Equal(5_000, r.Plan(100, 5_000)); // never past the end of the file
            Assert.Equal(0, r.Plan(100, 100)); // nothing to read ahead at the end

            r.Track(0, 100); // a seek elsewhere starts the count again
            Assert.Equal(0, r.Plan(100, 1 << 30));
            Assert.Equal(0, r.Plan(20_000, 1 << 30));
        }
        finally
        {
            r.Dispose();
        }
    }

    [Fact]
    public void AScanReadsAheadAndReturnsTheSameData()
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/ra");
        var options = new KvOptions { FileSystem = fs, DisableAutoCompactions = true, BlockCache = new KvBlockCache(64 << 10) };
        const int Keys = 20_000;
        using (KvDb db = KvDb.Open("/ra/db", options))
        {
            for (int i = 0; i < Keys; i++)
            {
                db.Put(Key(i), Value(i));
            }
            db.Flush();
        }
        using (KvDb db = KvDb.Open("/ra/db", options))
        {
            Assert.NotNull(db.Get(Key(7))); // the table is open: what follows is the scan's reads
            int reads = 0;
            fs.ShouldFail = (op, path) =>
            {
                if (op == FileOperation.Read && path.EndsWith(".sst", StringComparison.Ordinal))
                {
                    Interlocked.Increment(ref reads);
                }
                return false;
            };
            int n = 0;
            using (KvIterator it = db.NewIterator(new ReadOptions { FillCache = false }))
            {
                for (it.SeekToFirst(); it.Valid; it.Next())
                {
                    Assert.Equal(Key(n), it.Key.ToArray());
                    Assert.Equal(Value(n), it.Value.ToArray());
                    n++;
                }
            }
            fs.ShouldFail = null;
            Assert.Equal(Keys, n);
            // 20,000 entries of ~130 bytes are ~650 data blocks of 4 KiB: one read each without
            // readahead; with it, two single reads then buffers doubling from 8 KiB to 256 KiB.
            Assert.True(reads < 40, $"{reads} reads for the scan");
        }
    }

    [Fact]
    public void ABlockReadAheadIsStillChecksummed()
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/rc");
        var options = new KvOptions { FileSystem = fs, DisableAutoCompactions = true, Compression = KvCompressionType.None };
        using (KvDb db = KvDb.Open("/rc/db", options))
        {
            for (int i = 0; i < 20_000; i++)
            {
                db.Put(Key(i), Value(i));
            }
            db.Flush();
        }
        string sst = fs.GetChildren("/rc/db").Single(f => f.EndsWith(".sst", StringComparison.Ordinal));
        string path = "/rc/db/" + sst;
        byte[] content = fs.ReadAllBytes(path);
        int at = content.Length / 2; // in the middle of the data blocks, far past the first reads
        content[at] ^= 0x40;
        fs.WriteAllBytes(path, content);
        using KvDb reopened = KvDb.Open("/rc/db", options);
        using KvIterator it = reopened.NewIterator(new ReadOptions { FillCache = false });
        Assert.Throws<KvCorruptionException>(() =>
        {
            for (it.SeekToFirst(); it.Valid; it.Next())
            {
            }
        });
    }

    private static byte[] Key(int i) => Encoding.ASCII.GetBytes($"key{i:D8}");

    private static byte[] Value(int i) => Encoding.ASCII.GetBytes($"value-{i:D8}-" + new string((char)('a' + (i % 26)), 100));
}
