using KvEngine.Db.Logs;
using KvEngine.Db.State;
using KvEngine.Storage;
using KvEngine.Versions;

namespace KvEngine.Tests.Db.Logs;

/// <summary>
/// <see cref="WalSet"/> on an in-memory file system: the current WAL is recorded in the MANIFEST
/// before it is written; a roll keeps the previous WAL's bytes for the total-size trigger until
/// no family's log number needs it; a failed roll changes nothing; the record-boundary size and
/// <see cref="WalDirectory"/>'s listing agree with what was appended.
/// </summary>
public sealed class WalSetTests : IDisposable
{
    private readonly FaultInjectionFileSystem _fs = new();
    private readonly DbMutex _mutex = new(); // taken around the members that must hold it, as the engine does
    private readonly VersionSet _versions;
    private readonly WalSet _wals;

    public WalSetTests()
    {
        _fs.CreateDirectory("/db");
        _versions = new VersionSet("/db", _fs);
        _versions.CreateNew();
        _versions.Recover();
        _wals = new WalSet(_mutex, "/db", _fs, _versions, memoryMapped: false);
    }

    public void Dispose()
    {
        _wals.Dispose();
        _versions.Dispose();
    }

    private T Held<T>(Func<T> read)
    {
        using (_mutex.Lock())
        {
            return read();
        }
    }

    private void Held(Action action)
    {
        using (_mutex.Lock())
        {
            action();
        }
    }

    private static byte[] Record(ulong sequence, int length)
    {
        using var batch = new WriteBatch();
        batch.Put(new byte[] { 1 }, new byte[length]);
        batch.Sequence = sequence;
        return batch.Data.ToArray();
    }

    [Fact]
    public void RollsKeepOlderWalsCountedUntilNoFamilyNeedsThem()
    {
        ulong first = _versions.NewFileNumber();
        _wals.Start(first);
        Assert.Equal(first, Held(() => _wals.CurrentNumber));
        Assert.Contains(first, _versions.TrackedWals);
        Assert.Equal(0, _wals.FlushedSize);

        byte[] a = Record(1, 100);
        byte[] b = Record(2, 300);
        _wals.Append(a, sync: false);
        _wals.Append(b, sync: true);
        Assert.Equal(a.Length + b.Length, Held(() => _wals.TotalBytes()));
        Assert.Equal(_fs.GetFileSize(FileNames.LogFile("/db", first)), _wals.FlushedSize);

        ulong second = _versions.NewFileNumber();
        Held(() => _wals.SyncCurrent());
        Held(() => _wals.Roll(second, abandonOld: false));
        Assert.Equal(second, Held(() => _wals.CurrentNumber));
        Assert.Contains(second, _versions.TrackedWals);
        Assert.Equal(0, _wals.FlushedSize);
        Assert.Equal(first, Held(() => _wals.OldestNumber));
        Assert.Equal(a.Length + b.Length, Held(() => _wals.TotalBytes()));

        byte[] c = Record(3, 50);
        _wals.Append(c, sync: false);
        Assert.Equal(a.Length + b.Length + c.Length, Held(() => _wals.TotalBytes()));

        // The default family still starts in an older WAL: the first one is live.
        Assert.True(Held(() => _wals.OldestLive()) <= first);
        Assert.Equal(first, Held(() => _wals.OldestNumber));

        // Its data is flushed (log number moved to the second WAL): the first leaves the accounting.
        _versions.AdvanceLogNumber(_versions.Default, second);
        Assert.Equal(second, Held(() => _wals.OldestLive()));
        Assert.Equal(second, Held(() => _wals.OldestNumber));
        Assert.Equal(c.Length, Held(() => _wals.TotalBytes()));

        var directory = new WalDirectory("/db", _fs);
        List<(ulong Number, ulong StartSequence, long Size)> files = directory.SortedWalFiles(Held(() => _wals.CurrentNumber), _wals.FlushedSize);
        Assert.Equal([(first, 1UL, _fs.GetFileSize(FileNames.LogFile("/db", first))), (second, 3UL, _wals.FlushedSize)], files);
        Assert.Equal([(second, _wals.FlushedSize)], directory.LiveWals(second, Held(() => _wals.CurrentNumber), _wals.FlushedSize));
    }

    [Fact]
    public void AFailedRollLeavesTheCurrentWalInPlace()
    {
        ulong first = _versions.NewFileNumber();
        _wals.Start(first);
        byte[] a = Record(1, 10);
        _wals.Append(a, sync: false);

        ulong second = _versions.NewFileNumber();
        _fs.ShouldFail = (op, path) => op == FileOperation.Create && path.EndsWith(".log", StringComparison.Ordinal);
        Assert.ThrowsAny<IOException>(() => Held(() => _wals.Roll(second, abandonOld: false)));
        _fs.ShouldFail = null;

        Assert.Equal(first, Held(() => _wals.CurrentNumber));
        Assert.DoesNotContain(second, _versions.TrackedWals);
        Assert.Equal(first, Held(() => _wals.OldestNumber));
        byte[] b = Record(2, 10);
        _wals.Append(b, sync: true); // still writable
        Assert.Equal(a.Length + b.Length, Held(() => _wals.TotalBytes()));
        Assert.Equal(_fs.GetFileSize(FileNames.LogFile("/db", first)), _wals.FlushedSize);
    }
}
