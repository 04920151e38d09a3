using KvEngine.Compaction;
using KvEngine.Db;
using KvEngine.Versions;
using KvEngine.Storage;

using static KvEngine.Tests.Compaction.CompactionTestUtil;
using ValueType = KvEngine.Format.ValueType;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Tests.Compaction;

/// <summary>FIFO compaction: the oldest files go beyond the size limit; small new files merge within level 0.</summary>
public sealed class FifoCompactionTests
{
    private readonly FaultInjectionFileSystem _fs = new();

    public FifoCompactionTests() => _fs.CreateDirectory("/f");

    private KvOptions Fifo(long maxBytes, bool allowCompaction) => new()
    {
        FileSystem = _fs,
        WriteBufferSize = 64 << 10,
        BlockSize = 1024,
        CompactionStyle = CompactionStyle.Fifo,
        FifoMaxTableFilesSize = maxBytes,
        FifoAllowCompaction = allowCompaction,
        DisableAutoCompactions = true, // the test runs the picks itself (CompactRange)
        Level0FileNumCompactionTrigger = 4,
    };

    [Fact]
    public void OldestFilesAreDeletedBeyondTheSizeLimitAndReadsStayCorrect()
    {
        const int filesWritten = 10;
        const int keysPerFile = 50;
        var value = new byte[200];
        // Room for about 4 files of ~10 KiB each.
        long limit = 4 * 10_500;
        var rng = new Random(7);
        using (KvDb db = KvDb.Open("/f/db", Fifo(limit, allowCompaction: false)))
        {
            for (int f = 0; f < filesWritten; f++)
            {
                for (int k = 0; k < keysPerFile; k++)
                {
                    rng.NextBytes(value); // incompressible: each file holds ~11 KB
                    value[0] = (byte)f;
                    db.Put(K($"f{f:D2}k{k:D3}"), value);
                }
                db.Put(K("shared"), K($"from file {f}"));
                db.Flush();
            }
            Assert.Equal(filesWritten, Files(db, 0));
            IReadOnlyList<FileMetaData> before = db.Impl.Versions.Current.Files(0); // newest first
            Assert.True(db.Impl.Versions.Current.LevelBytes(0) > limit);
            Assert.Equal("1", db.GetProperty("rocksdb.compaction-pending"));
            db.CompactRange(null, null);
            Assert.Equal("0", db.GetProperty("rocksdb.compaction-pending"));

            Version v = db.Impl.Versions.Current;
            for (int level = 1; level < Version.NumLevels; level++)
            {
                Assert.Equal(0, v.NumFiles(level));
            }
            Assert.True(v.LevelBytes(0) <= limit, $"{v.LevelBytes(0)} bytes left, limit {limit}");
            int kept = v.NumFiles(0);
            Assert.InRange(kept, 1, filesWritten - 1);
            // Exactly the newest files that fit: one more (the newest dropped) would not.
            for (int i = 0; i < kept; i++)
            {
                Assert.Same(before[i], v.Files(0)[i]);
            }
            Assert.True(v.LevelBytes(0) + (long)before[kept].FileSize > limit);
            int firstKept = filesWritten - kept;
            for (int f = 0; f < filesWritten; f++)
            {
                byte[]? got = db.Get(K($"f{f:D2}k007"));
                if (f < firstKept)
                {
                    Assert.Null(got);
                }
                else
                {
                    Assert.NotNull(got);
                    Assert.Equal((byte)f, got[0]);
                }
            }
            Assert.Equal($"from file {filesWritten - 1}", System.Text.Encoding.ASCII.GetString(db.Get(K("shared"))!));
            Assert.True(db.Counters.Compactions > 0);
        }
        using (KvDb db = KvDb.Open("/f/db", Fifo(limit, allowCompaction: false)))
        {
            Assert.Null(db.Get(K("f00k007")));
            Assert.NotNull(db.Get(K($"f{filesWritten - 1:D2}k007")));
        }
        int tables = 0;
        foreach (string child in _fs.GetChildren("/f/db"))
        {
            tables += child.EndsWith(".sst", StringComparison.Ordinal) ? 1 : 0;
        }
        Assert.InRange(tables, 1, filesWritten - 1); // deleted files left the disk too
    }

    [Fact]
    public void IntraLevel0CompactionMergesTheSmallNewFilesAndKeepsTheirDeletions()
    {
        using KvDb db = KvDb.Open("/f/db", Fifo(long.MaxValue, allowCompaction: true));
        var big = new byte[1000];
        for (int k = 0; k < 50; k++)
        {
            db.Put(K($"k{k:D3}"), big);
        }
        db.Flush(); // an old large file (~50 KB)
        for (int f = 0; f < 4; f++)
        {
            db.Put(K($"small{f}"), K($"v{f}"));
            if (f == 3)
            {
                db.Delete(K("k005")); // hides a key of the old file, which the merge leaves alone
            }
            db.Flush();
        }
        Assert.Equal(5, Files(db, 0));
        ulong oldFile = db.Impl.Versions.Current.Files(0)[^1].Number;
        Assert.Equal("1", db.GetProperty("rocksdb.compaction-pending"));

        db.CompactRange(null, null);

        Version v = db.Impl.Versions.Current;
        Assert.Equal(2, v.NumFiles(0));
        Assert.Equal(oldFile, v.Files(0)[^1].Number);
        var merged = Entries(db, _fs, 0);
        Assert.Contains(("k005", merged.Find(e => e.Key == "k005").Seq, ValueType.Deletion), merged);
        Assert.Null(db.Get(K("k005")));
        Assert.NotNull(db.Get(K("k006")));
        for (int f = 0; f < 4; f++)
        {
            Assert.Equal($"v{f}", System.Text.Encoding.ASCII.GetString(db.Get(K($"small{f}"))!));
        }
        Assert.Equal("0", db.GetProperty("rocksdb.compaction-pending"));
        db.CompactRange(null, null); // two files: below the trigger, nothing to merge
        Assert.Equal(2, Files(db, 0));
    }

    [Fact]
    public void IntraLevel0RunStopsWhereBytesPerDeletedFileWouldGrow()
    {
        FileMetaData F(ulong n, long size) => File(n, "a", "b", size, n);
        var files = new[] { F(9, 100), F(8, 100), F(7, 120), F(6, 90), F(5, 5000), F(4, 100) };
        // Means per removed file: 200/1, 320/2, 410/3, then 5410/4 grows: the run is the 4 newest.
        Assert.Equal(4, CompactionPicker.FindIntraLevel0Run(files, 4, 1000, long.MaxValue));
        Assert.Equal(0, CompactionPicker.FindIntraLevel0Run(files, 5, 1000, long.MaxValue)); // too few files
        Assert.Equal(0, CompactionPicker.FindIntraLevel0Run(files, 4, 100, long.MaxValue)); // files too large
        Assert.Equal(0, CompactionPicker.FindIntraLevel0Run(files, 4, 1000, 300)); // total bound
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task BackgroundFifoKeepsTheSizeBoundWhileWritesGoOn(bool allowCompaction)
    {
        // Room for ~60 level-0 files: beyond the stop trigger, which FIFO ignores (as RocksDB does).
        KvOptions o = Fifo(1 << 20, allowCompaction);
        o.WriteBufferSize = 16 << 10;
        o.DisableAutoCompactions = false;
        o.Level0SlowdownWritesTrigger = 20;
        o.Level0StopWritesTrigger = 36;
        using KvDb db = KvDb.Open("/f/db", o);
        var rng = new Random(3);
        var value = new byte[100];
        Task writer = Task.Run(() =>
        {
            for (int i = 0; i < 20_000; i++)
            {
                rng.NextBytes(value);
                db.Put(K($"key{rng.Next(1_000_000):D7}"), value);
            }
        });
        await writer.WaitAsync(TimeSpan.FromSeconds(30)); // a TimeoutException means writes stopped
        db.Flush();
        Assert.True(SpinWait.SpinUntil(() => db.GetProperty("rocksdb.compaction-pending") == "0" &&
            db.GetProperty("rocksdb.num-running-compactions") == "0", TimeSpan.FromSeconds(30)), "compaction never settled");
        Version v = db.Impl.Versions.Current;
        Assert.Equal(v.NumFiles(0), CountAllFiles(v));
        Assert.True(v.LevelBytes(0) <= 1 << 20);
        Assert.True(db.Counters.Compactions > 0);
    }

    private static int CountAllFiles(Version v)
    {
        int n = 0;
        for (int level = 0; level < Version.NumLevels; level++)
        {
            n += v.NumFiles(level);
        }
        return n;
    }
}
