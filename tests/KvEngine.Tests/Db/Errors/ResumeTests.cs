using System.Text;
using KvEngine.Storage;

namespace KvEngine.Tests.Db.Errors;

/// <summary>
/// Leaving the background-error state without a reopen: a full disk clears itself once space is
/// back; other I/O errors clear with Resume(); corruption does not. No acknowledged write is lost
/// across the error, the resume, a crash or a power loss.
/// </summary>
public class ResumeTests
{
    private static KvOptions Options(FaultInjectionFileSystem fs, int maxResumes = int.MaxValue) => new()
    {
        FileSystem = fs,
        WriteBufferSize = 16 << 10,
        MaxBackgroundErrorResumeCount = maxResumes,
        BackgroundErrorResumeRetryInterval = TimeSpan.FromMilliseconds(5),
    };

    private static byte[] K(int i) => Encoding.ASCII.GetBytes($"key{i:D5}");

    private static byte[] V(int i) => Encoding.ASCII.GetBytes($"value{i:D5}-{new string('v', 40)}");

    private static void WaitUntilWritable(KvDb db)
    {
        // A bounded wait for the background recovery (it retries every 5 ms), not a timing assertion.
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(60);
        while (true)
        {
            try
            {
                db.Put("probe"u8, "1"u8);
                return;
            }
            catch (KvException) when (DateTime.UtcNow < deadline)
            {
                Thread.Sleep(5);
            }
        }
    }

    private static void AssertAll(KvDb db, int from, int to)
    {
        for (int i = from; i < to; i++)
        {
            Assert.Equal(V(i), db.Get(K(i)));
        }
    }

    [Theory]
    [InlineData("Create", ".sst")]     // flush cannot create its table
    [InlineData("Append", ".sst")]     // flush cannot write its table
    [InlineData("Append", "MANIFEST")] // flush cannot record its table
    [InlineData("Flush", ".log")]      // a write cannot reach its WAL
    public void AFullDiskClearsItselfOnceSpaceIsBack(string operation, string file)
    {
        FileOperation op = Enum.Parse<FileOperation>(operation);
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, Options(fs));
        for (int i = 0; i < 200; i++)
        {
            db.Put(K(i), V(i));
        }
        fs.InjectedHResult = StorageErrors.ENoSpc;
        fs.ShouldFail = (o, path) => o == op && path.Contains(file, StringComparison.Ordinal);
        int acknowledged = 200;
        bool failed = false;
        for (int i = 200; i < 2000 && !failed; i++)
        {
            try
            {
                db.Put(K(i), V(i));
                acknowledged = i + 1;
            }
            catch (KvException)
            {
                failed = true;
            }
        }
        if (op != FileOperation.Flush)
        {
            Assert.Throws<KvWriteStoppedException>(db.Flush); // nothing flushes while the disk is full
        }
        // Refused by the stop, or (an automatic resume got through meanwhile) by its own failed WAL write.
        KvException refused = Assert.ThrowsAny<KvException>(() => db.Put("refused"u8, "x"u8));
        Assert.Equal((KvStatusCode.IOError, KvStatusSubCode.NoSpace), (refused.StatusCode, refused.SubCode));
        AssertAll(db, 0, acknowledged); // reads go on
        // One error, or more: an automatic resume can succeed while only WAL writes fail (it
        // writes tables), and the next write then records a second error.
        string errorsWhileFull = db.GetProperty("rocksdb.background-errors")!;
        Assert.True(long.Parse(errorsWhileFull, System.Globalization.CultureInfo.InvariantCulture) >= 1);

        fs.ShouldFail = null; // space is back
        WaitUntilWritable(db);
        db.Put("after"u8, "resume"u8, new WriteOptions { Sync = true });
        db.Flush();
        AssertAll(db, 0, acknowledged);
        Assert.Equal(errorsWhileFull, db.GetProperty("rocksdb.background-errors")); // none once space is back

        DbTestUtil.Abandon(fs, db, powerLoss: true);
        using KvDb reopened = KvDb.Open(DbTestUtil.DbPath, Options(fs));
        AssertAll(reopened, 0, acknowledged);
        Assert.Equal("resume"u8.ToArray(), reopened.Get("after"u8));
        Assert.Null(reopened.Get("refused"u8));
    }

    [Fact]
    public void AnotherIoErrorWaitsForResume()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, Options(fs));
        for (int i = 0; i < 100; i++)
        {
            db.Put(K(i), V(i));
        }
        fs.ShouldFail = (o, path) => o == FileOperation.Create && path.EndsWith(".sst", StringComparison.Ordinal); // EIO-like
        Assert.Throws<KvException>(db.Flush);
        fs.ShouldFail = null;
        Assert.Throws<KvWriteStoppedException>(() => db.Put("x"u8, "y"u8)); // not retried by itself
        var stillFailing = Assert.Throws<KvException>(() => { fs.ShouldFail = (o, p) => o == FileOperation.Create && p.EndsWith(".sst", StringComparison.Ordinal); db.Resume(); });
        Assert.NotNull(stillFailing.InnerException);
        fs.ShouldFail = null;
        db.Resume();
        db.Resume(); // nothing to do
        db.Put("x"u8, "y"u8);
        AssertAll(db, 0, 100);
        db.Flush();
        DbTestUtil.Abandon(fs, db, powerLoss: false);
        using KvDb reopened = KvDb.Open(DbTestUtil.DbPath, Options(fs));
        AssertAll(reopened, 0, 100);
        Assert.Equal("y"u8.ToArray(), reopened.Get("x"u8));
    }

    [Fact]
    public void WithAutomaticResumeOffANoSpaceErrorWaitsForResume()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, Options(fs, maxResumes: 0));
        db.Put(K(1), V(1));
        fs.InjectedHResult = StorageErrors.ENoSpc;
        fs.ShouldFail = (o, path) => o == FileOperation.Create && path.EndsWith(".sst", StringComparison.Ordinal);
        Assert.Throws<KvException>(db.Flush);
        fs.ShouldFail = null;
        Assert.Throws<KvWriteStoppedException>(() => db.Put("x"u8, "y"u8));
        db.Resume();
        db.Put("x"u8, "y"u8);
        Assert.Equal(V(1), db.Get(K(1)));
    }

    [Fact]
    public void ReopeningOnAFullDiskKeepsTheRecoveredDataInMemoryAndItsLogs()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        var options = Options(fs);
        options.WriteBufferSize = 4 << 20; // the recovered data stays in one memtable
        KvDb db = KvDb.Open(DbTestUtil.DbPath, options);
        for (int i = 0; i < 300; i++)
        {
            db.Put(K(i), V(i), new WriteOptions { Sync = i == 299 });
        }
        DbTestUtil.Abandon(fs, db, powerLoss: true);

        // The disk is full for tables: recovery cannot flush the log, and opens anyway.
        fs.InjectedHResult = StorageErrors.ENoSpc;
        fs.ShouldFail = (o, path) => o == FileOperation.Create && path.EndsWith(".sst", StringComparison.Ordinal);
        db = KvDb.Open(DbTestUtil.DbPath, options);
        AssertAll(db, 0, 300);
        Assert.Equal("0", db.GetProperty("rocksdb.num-files-at-level0"));
        for (int i = 300; i < 400; i++)
        {
            db.Put(K(i), V(i), new WriteOptions { Sync = i == 399 });
        }
        DbTestUtil.Abandon(fs, db, powerLoss: true); // the old logs were kept: nothing is lost
        fs.ShouldFail = (o, path) => o == FileOperation.Create && path.EndsWith(".sst", StringComparison.Ordinal);
        db = KvDb.Open(DbTestUtil.DbPath, options);
        AssertAll(db, 0, 400);
        db.Dispose();

        fs.ShouldFail = null; // space is back: the next open writes the tables
        using KvDb reopened = KvDb.Open(DbTestUtil.DbPath, options);
        AssertAll(reopened, 0, 400);
        Assert.NotEqual("0", reopened.GetProperty("rocksdb.num-files-at-level0"));
        reopened.Flush();
    }

    [Fact]
    public void AfterItsLastAttemptTheAutomaticResumeStopsAndResumeStillWorks()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, Options(fs, maxResumes: 3));
        db.Put(K(1), V(1));
        int creates = 0;
        fs.InjectedHResult = StorageErrors.ENoSpc;
        fs.ShouldFail = (o, path) =>
        {
            bool table = o == FileOperation.Create && path.EndsWith(".sst", StringComparison.Ordinal);
            if (table)
            {
                Interlocked.Increment(ref creates); // each flush attempt tries to create one table
            }
            return table;
        };
        Assert.Throws<KvException>(db.Flush);
        // Wait (bounded) until the automatic loop has ended, then count its attempts.
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(60);
        while ((Volatile.Read(ref creates) < 4 || db.Impl.AutomaticResumeRunning) && DateTime.UtcNow < deadline)
        {
            Thread.Sleep(5);
        }
        Assert.False(db.Impl.AutomaticResumeRunning);
        Assert.Equal(4, Volatile.Read(ref creates)); // the failed flush and exactly three attempts
        fs.ShouldFail = null;
        Assert.Throws<KvWriteStoppedException>(() => db.Put("x"u8, "y"u8));
        db.Resume();
        db.Put("x"u8, "y"u8);
        Assert.Equal(V(1), db.Get(K(1)));
    }
}
