using KvEngine.Storage;
using KvEngine.Tests.Db;

namespace KvEngine.Tests;

/// <summary>
/// Each typed error of the public API, provoked the way a caller meets it, with RocksDB's status
/// code and subcode: a held LOCK, writes after a background error (an I/O error and a full disk),
/// a read-only open's writes, an unsupported operation, and a failing merge operator.
/// </summary>
public sealed class TypedErrorTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-errors-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Fact]
    public void ASecondOpenOfALockedPathRaisesLockHeld()
    {
        string path = Path.Combine(_dir.FullName, "db");
        using KvDb first = KvDb.Open(path);
        first.Put("k"u8, "v"u8);

        KvLockHeldException open = Assert.Throws<KvLockHeldException>(() => KvDb.Open(path));
        Assert.Equal((KvStatusCode.IOError, KvStatusSubCode.None), (open.StatusCode, open.SubCode));
        Assert.Contains(path, open.Message, StringComparison.Ordinal);
        Assert.IsType<KvLockHeldException>(Assert.Throws<KvLockHeldException>(() => KvDb.Destroy(path)));
        Assert.IsType<KvLockHeldException>(Assert.Throws<KvLockHeldException>(() => KvDb.Repair(path)));
        Assert.Equal("v"u8.ToArray(), first.Get("k"u8)); // the refused calls disturbed nothing
    }

    [Fact]
    public void WritesAfterABackgroundErrorRaiseWriteStoppedCarryingIt()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        KvOptions options = DbTestUtil.SmallOptions(fs);
        options.MaxBackgroundErrorResumeCount = 0;
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, options);
        db.Put("a"u8, "1"u8);
        fs.ShouldFail = (op, p) => op == FileOperation.Create && p.EndsWith(".sst", StringComparison.Ordinal);
        KvException flush = Assert.Throws<KvException>(db.Flush); // the failure itself
        Assert.Equal(KvStatusCode.IOError, flush.StatusCode);
        fs.ShouldFail = null;

        KvWriteStoppedException put = Assert.Throws<KvWriteStoppedException>(() => db.Put("b"u8, "2"u8));
        Assert.NotNull(put.BackgroundError);
        Assert.Same(put.BackgroundError, put.InnerException);
        Assert.Equal((KvStatusCode.IOError, KvStatusSubCode.None), (put.StatusCode, put.SubCode));
        Assert.Equal(put.BackgroundError.Message, db.GetProperty("kvengine.background-error"));
        Assert.Throws<KvWriteStoppedException>(() => db.WriteAsync(new WriteBatch()).AsTask().GetAwaiter().GetResult());
        Assert.Throws<KvWriteStoppedException>(() => db.CompactRange(null, null));
        Assert.Equal("1"u8.ToArray(), db.Get("a"u8)); // reads go on

        db.Resume();
        db.Put("b"u8, "2"u8);
        Assert.Equal("2"u8.ToArray(), db.Get("b"u8));
    }

    [Fact]
    public void WritesStoppedByAFullDiskCarryTheNoSpaceSubCode()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        KvOptions options = DbTestUtil.SmallOptions(fs);
        options.MaxBackgroundErrorResumeCount = 0; // no automatic resume: the stop stays until Resume
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, options);
        db.Put("a"u8, "1"u8);
        fs.InjectedHResult = StorageErrors.ENoSpc;
        fs.ShouldFail = (op, p) => op == FileOperation.Create && p.EndsWith(".sst", StringComparison.Ordinal);
        KvException flush = Assert.Throws<KvException>(db.Flush);
        Assert.Equal((KvStatusCode.IOError, KvStatusSubCode.NoSpace), (flush.StatusCode, flush.SubCode));
        fs.ShouldFail = null;

        KvWriteStoppedException put = Assert.Throws<KvWriteStoppedException>(() => db.Put("b"u8, "2"u8));
        Assert.Equal((KvStatusCode.IOError, KvStatusSubCode.NoSpace), (put.StatusCode, put.SubCode));
        db.Resume();
        db.Put("b"u8, "2"u8);
    }

    [Fact]
    public void AReadOnlyOpensWritesRaiseReadOnly()
    {
        string path = Path.Combine(_dir.FullName, "db");
        using (KvDb writer = KvDb.Open(path))
        {
            writer.Put("k"u8, "v"u8);
        }
        using KvDb ro = KvDb.OpenReadOnly(path);
        KvReadOnlyException put = Assert.Throws<KvReadOnlyException>(() => ro.Put("k"u8, "w"u8));
        Assert.IsAssignableFrom<KvNotSupportedException>(put);
        Assert.Equal((KvStatusCode.NotSupported, KvStatusSubCode.None), (put.StatusCode, put.SubCode));
        Assert.Throws<KvReadOnlyException>(ro.Flush);
        Assert.Throws<KvReadOnlyException>(() => ro.WriteAsync(new WriteBatch()).AsTask().GetAwaiter().GetResult());
        Assert.Equal("v"u8.ToArray(), ro.Get("k"u8));
    }

    [Fact]
    public void AnUnsupportedOperationRaisesNotSupported()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, DbTestUtil.SmallOptions(fs));
        db.Put("k"u8, "v"u8);
        using Snapshot snapshot = db.GetSnapshot();
        using KvIterator it = db.NewIterator(new ReadOptions { Snapshot = snapshot });
        KvNotSupportedException e = Assert.Throws<KvNotSupportedException>(it.Refresh);
        Assert.Equal(KvStatusCode.NotSupported, e.StatusCode);
    }

    [Fact]
    public void AnOpenOfAMissingDatabaseIsAnInvalidArgument()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        KvOptions options = DbTestUtil.SmallOptions(fs);
        options.CreateIfMissing = false;
        KvException e = Assert.Throws<KvException>(() => KvDb.Open(DbTestUtil.DbPath, options));
        Assert.Equal(KvStatusCode.InvalidArgument, e.StatusCode);
    }

    [Fact]
    public void AFailingMergeOperatorIsReportedAsRocksDbDoes()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        KvOptions options = DbTestUtil.SmallOptions(fs);
        options.MergeOperator = new ThrowingMergeOperator();
        using KvDb db = KvDb.Open(DbTestUtil.DbPath, options);
        db.Merge("k"u8, "x"u8);
        KvException e = Assert.Throws<KvException>(() => db.Get("k"u8));
        Assert.Equal((KvStatusCode.Corruption, KvStatusSubCode.MergeOperatorFailed), (e.StatusCode, e.SubCode));
        Assert.IsType<InvalidOperationException>(e.InnerException);
    }

    [Fact]
    public void CodesFollowTheTypeAndTheCause()
    {
        Assert.Equal(KvStatusCode.Corruption, new KvCorruptionException("bad block").StatusCode);
        Assert.Equal((KvStatusCode.Busy, KvStatusSubCode.Deadlock),
            Codes(new KvBusyException("conflict", KvStatusSubCode.Deadlock, null)));
        Assert.Equal((KvStatusCode.TimedOut, KvStatusSubCode.LockTimeout),
            Codes(new KvTimeoutException("lock wait", KvStatusSubCode.LockTimeout, null)));
        Assert.Equal((KvStatusCode.IOError, KvStatusSubCode.NoSpace),
            Codes(new KvException("write", new IOException("full", StorageErrors.ENoSpc))));
        Assert.Equal((KvStatusCode.IOError, KvStatusSubCode.PathNotFound),
            Codes(new KvException("open", new DirectoryNotFoundException("gone"))));
        var stopped = new KvWriteStoppedException("stopped", new KvCorruptionException("bad"));
        Assert.Equal(KvStatusCode.Corruption, stopped.StatusCode);
        // RocksDB's numeric values.
        Assert.Equal(15, (int)KvStatusCode.ColumnFamilyDropped);
        Assert.Equal(4, (int)KvStatusSubCode.NoSpace);
        Assert.Equal(14, (int)KvStatusSubCode.IOFenced);
    }

    private static (KvStatusCode, KvStatusSubCode) Codes(KvException e) => (e.StatusCode, e.SubCode);

    private sealed class ThrowingMergeOperator : KvMergeOperator
    {
        public override string Name => "Throwing";

        public override bool TryFullMerge(ReadOnlySpan<byte> key, bool hasExistingValue, ReadOnlySpan<byte> existingValue,
            IReadOnlyList<ReadOnlyMemory<byte>> operands, System.Buffers.IBufferWriter<byte> result) =>
            throw new InvalidOperationException("merge refused");
    }
}
