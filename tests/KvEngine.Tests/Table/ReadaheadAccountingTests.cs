using System.Text;
using KvEngine.Storage;
using KvEngine.Table;
using KvEngine.Tests.Storage;

namespace KvEngine.Tests.Table;

/// <summary>
/// The reads a database issues, counted through <see cref="CountingFileSystem"/>: a sequential
/// scan reads its table in reads that grow from the automatic readahead's first size to its
/// maximum (aligned ones with direct I/O), a seek elsewhere starts small again, and a compaction
/// reads each input CompactionReadaheadSize bytes past the block it needs, from the first read on,
/// with buffered and with direct I/O.
/// </summary>
public sealed class ReadaheadAccountingTests : IDisposable
{
    private const int Keys = 60_000;
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-readahead-");

    public void Dispose() => _dir.Delete(recursive: true);

    private static byte[] Key(int i) => Encoding.ASCII.GetBytes($"key{i:D8}");

    private static byte[] Value(int i) => Encoding.ASCII.GetBytes($"value-{i}-{new string('x', i % 61)}");

    private KvOptions Options(CountingFileSystem fs, bool direct, int compactionReadahead = 2 << 20) => new()
    {
        FileSystem = fs,
        UseDirectReads = direct,
        UseDirectIoForFlushAndCompaction = direct,
        DisableAutoCompactions = true,
        CompactionReadaheadSize = compactionReadahead,
        BlockCache = new KvBlockCache(64 << 10), // far smaller than the table: the scan reads from the file
        WriteBufferSize = 64 << 20,
    };

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void ASequentialScanIssuesGrowingReadsAndASeekStartsSmallAgain(bool direct)
    {
        string path = Path.Combine(_dir.FullName, "scan");
        var fs = new CountingFileSystem();
        using (KvDb db = KvDb.Open(path, Options(fs, direct)))
        {
            for (int i = 0; i < Keys; i++)
            {
                db.Put(Key(i), Value(i));
            }
            db.Flush();
        }
        using (KvDb db = KvDb.Open(path, Options(fs, direct)))
        {
            Assert.NotNull(db.Get(Key(Keys - 1))); // the table is open; what follows are the scan's reads
            fs.Reads.Clear();
            int n = 0;
            using (KvIterator it = db.NewIterator())
            {
                for (it.SeekToFirst(); it.Valid; it.Next())
                {
                    n++;
                }
            }
            Assert.Equal(Keys, n);
            List<(string Path, long Offset, int Length, bool Direct)> reads = fs.ReadsOf(".sst");
            long tableSize = new FileInfo(reads[0].Path).Length;
            Assert.True(reads.Count < tableSize / 4096 / 8, $"{reads.Count} reads for a {tableSize}-byte table");
            int largest = reads.Max(r => r.Length);
            Assert.True(largest >= Readahead.MaxSize, $"largest read {largest}");
            Assert.True(largest <= Readahead.MaxSize + 2 * DirectIO.Alignment, $"largest read {largest}");
            int grown = reads.FindIndex(r => r.Length >= Readahead.MaxSize);
            for (int i = 3; i <= grown; i++) // from the first readahead read (the third) on
            {
                Assert.True(reads[i].Length >= reads[i - 1].Length, $"read {i} ({reads[i].Length} bytes) is smaller than the one before ({reads[i - 1].Length})");
            }
            Assert.True(reads[2].Length >= Readahead.InitialSize, "the third sequential block read reads ahead");
            Assert.True(reads[1].Length < Readahead.InitialSize, "the first two block reads are single blocks");
            if (direct)
            {
                Assert.All(reads, r => Assert.True(r.Direct && r.Offset % DirectIO.Alignment == 0 && r.Length % DirectIO.Alignment == 0,
                    $"direct read of {r.Length} at {r.Offset} is not aligned"));
            }

            fs.Reads.Clear();
            using (KvIterator it = db.NewIterator())
            {
                it.Seek(Key(Keys / 2));
                Assert.True(it.Valid);
                it.Next();
            }
            List<(string Path, long Offset, int Length, bool Direct)> seek = fs.ReadsOf(".sst");
            Assert.NotEmpty(seek);
            Assert.True(seek[0].Length < Readahead.InitialSize, $"a seek read {seek[0].Length} bytes");
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void ACompactionReadsItsInputsCompactionReadaheadSizeAtATime(bool direct)
    {
        const int Ahead = 64 << 10;
        string path = Path.Combine(_dir.FullName, "compact");
        var fs = new CountingFileSystem();
        var inputs = new List<(string Path, long Size)>();
        using (KvDb db = KvDb.Open(path, Options(fs, direct, Ahead)))
        {
            for (int round = 0; round < 2; round++)
            {
                for (int i = round; i < Keys; i += 2)
                {
                    db.Put(Key(i), Value(i));
                }
                db.Flush();
            }
            inputs.AddRange(Directory.GetFiles(path, "*.sst").Select(p => (p, new FileInfo(p).Length)));
            Assert.Equal(2, inputs.Count);
            fs.Reads.Clear();
            db.CompactRange(null, null);
            Assert.Equal(Value(Keys - 1), db.Get(Key(Keys - 1)));
        }
        foreach ((string input, long size) in inputs)
        {
            List<(string Path, long Offset, int Length, bool Direct)> reads = fs.ReadsOf(Path.GetFileName(input));
            Assert.NotEmpty(reads);
            // Every read but the last one (which stops at the end of the file) covers a block and
            // CompactionReadaheadSize bytes past it.
            for (int i = 0; i < reads.Count - 1; i++)
            {
                Assert.True(reads[i].Length > Ahead, $"read {i} of {reads.Count} of {input}: {reads[i].Length} bytes");
                Assert.True(reads[i].Length <= Ahead + 3 * 4096 + DirectIO.Alignment, $"read {i}: {reads[i].Length} bytes");
            }
            Assert.True(reads.Count <= size / Ahead + 1, $"{reads.Count} reads of a {size}-byte input");
            Assert.All(reads, r => Assert.Equal(direct, r.Direct));
        }
    }
}
