using KvEngine.Format;
using KvEngine.Storage;
using KvEngine.Tests.Table;
using KvEngine.Wal;

namespace KvEngine.Tests.Db;

/// <summary>
/// Damaged write-ahead logs at open, per <see cref="WalRecoveryMode"/> (docs/formats/log.md):
/// a checksum failure in the middle of the last log, and a torn (truncated) last record.
/// Point-in-time recovery must give exactly the writes before the damage, never a value that was
/// not written and never a write from after the damage.
/// </summary>
public sealed class WalCorruptionTests
{
    private const int BlockSize = 32 * 1024;
    private const int Writes = 150;

    private const long NoFlushWriteBuffer = 4 << 20;

    public static TheoryData<WalRecoveryMode> AllModes() => new()
    {
        WalRecoveryMode.TolerateCorruptedTailRecords,
        WalRecoveryMode.AbsoluteConsistency,
        WalRecoveryMode.PointInTimeRecovery,
        WalRecoveryMode.SkipAnyCorruptedRecords,
    };

    [Theory]
    [InlineData(10)]
    [InlineData(75)]
    [InlineData(140)]
    public void ChecksumFailureInTheLastLogGivesThePrefixUnderPointInTimeRecovery(int damaged)
    {
        (FaultInjectionFileSystem fs, string log, long[] ends) = BuildLog();
        long offset = FlipInRecord(fs, log, ends, damaged);
        using KvDb db = Open(fs, WalRecoveryMode.PointInTimeRecovery);
        AssertExactlyPrefix(db, damaged, $"flip at {offset} in write {damaged}");

        // The recovered state is durable, and the writes after the damage never come back.
        db.Put(Key(Writes + 1), Value(Writes + 1));
        db.Dispose();
        using KvDb again = Open(fs, WalRecoveryMode.AbsoluteConsistency);
        SortedDictionary<string, string> all = DbTestUtil.ReadAll(again);
        Assert.Equal(damaged + 1, all.Count);
        Assert.Equal(DbTestUtil.S(Value(Writes + 1)), all[DbTestUtil.S(Key(Writes + 1))]);
    }

    [Theory]
    [InlineData(WalRecoveryMode.AbsoluteConsistency)]
    [InlineData(WalRecoveryMode.TolerateCorruptedTailRecords)]
    public void ChecksumFailureInTheLastLogFailsTheOpenInStrictModes(WalRecoveryMode mode)
    {
        (FaultInjectionFileSystem fs, string log, long[] ends) = BuildLog();
        FlipInRecord(fs, log, ends, 75);
        Assert.Throws<KvCorruptionException>(() => Open(fs, mode).Dispose());
        // The failed open changed nothing: the same damage is still reported.
        Assert.Throws<KvCorruptionException>(() => Open(fs, mode).Dispose());
    }

    [Theory]
    [InlineData(10)]
    [InlineData(75)]
    [InlineData(140)]
    public void ChecksumFailureUnderSkipModeKeepsEveryUndamagedBlock(int damaged)
    {
        (FaultInjectionFileSystem fs, string log, long[] ends) = BuildLog();
        long offset = FlipInRecord(fs, log, ends, damaged);
        // Skip mode drops the rest of the damaged block (the length itself may be what is damaged):
        // writes starting in a later block must be there; the ones in between may be lost.
        long nextBlock = (offset / BlockSize + 1) * BlockSize;
        using KvDb db = Open(fs, WalRecoveryMode.SkipAnyCorruptedRecords);
        int present = 0;
        int laterBlocks = 0;
        for (int i = 0; i < Writes; i++)
        {
            byte[]? v = db.Get(Key(i));
            long start = i == 0 ? 0 : ends[i - 1];
            if (i < damaged || start >= nextBlock)
            {
                Assert.True(v != null, $"undamaged write {i} is missing (flip at {offset})");
                laterBlocks += i > damaged ? 1 : 0;
            }
            if (i == damaged)
            {
                Assert.Null(v);
            }
            if (v != null)
            {
                Assert.Equal(Value(i), v);
                present++;
            }
        }
        Assert.Equal(present, DbTestUtil.ReadAll(db).Count);
        Assert.True(damaged > 100 || laterBlocks > 0, "the log should go on after the damaged block");
    }

    [Theory]
    [MemberData(nameof(AllModes))]
    public void TornLastRecordIsDroppedInEveryModeButAbsoluteConsistency(WalRecoveryMode mode)
    {
        foreach (bool inHeader in new[] { true, false })
        {
            (FaultInjectionFileSystem fs, string log, long[] ends) = BuildLog();
            byte[] bytes = fs.ReadAllBytes(log);
            long start = ends[^2];
            long cut = inHeader ? start + 3 : (start + ends[^1]) / 2;
            fs.WriteAllBytes(log, bytes.AsSpan(0, (int)cut));
            if (mode == WalRecoveryMode.AbsoluteConsistency)
            {
                Assert.Throws<KvCorruptionException>(() => Open(fs, mode).Dispose());
                continue;
            }
            using KvDb db = Open(fs, mode);
            AssertExactlyPrefix(db, Writes - 1, $"cut at {cut} ({(inHeader ? "header" : "body")})");
        }
    }

    [Fact]
    public void ATruncatedLogEndingOnARecordBoundaryIsNotDamage()
    {
        (FaultInjectionFileSystem fs, string log, long[] ends) = BuildLog();
        fs.WriteAllBytes(log, fs.ReadAllBytes(log).AsSpan(0, (int)ends[99]));
        using KvDb db = Open(fs, WalRecoveryMode.AbsoluteConsistency);
        AssertExactlyPrefix(db, 100, "cut after write 99");
    }

    /// <summary>Found by fuzzing (tests/KvEngine.Fuzz/regressions/writebatch/sequence-past-max.bin).</summary>
    [Theory]
    [MemberData(nameof(AllModes))]
    public void ABatchWhoseSequencesRunPastTheLargestIsCorruption(WalRecoveryMode mode)
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        string log;
        using (KvDb db = Open(fs, mode))
        {
            log = Path.Combine(DbTestUtil.DbPath, Assert.Single(DbTestUtil.ListFiles(fs, DbTestUtil.DbPath).Logs));
            db.Put(Key(0), Value(0));
        }
        using var file = new MemoryWritableFile();
        using (var batch = new WriteBatch())
        {
            batch.Put(Key(1), Value(1));
            batch.Put(Key(2), Value(2));
            batch.Sequence = InternalKeys.MaxSequenceNumber; // the second put would take 2^56
            new LogWriter(file).AddRecord(batch.Data);
        }
        fs.WriteAllBytes(log, file.ToArray());
        KvCorruptionException e = Assert.Throws<KvCorruptionException>(() => Open(fs, mode).Dispose());
        Assert.Contains("runs past the largest sequence number", e.Message, StringComparison.Ordinal);
    }

    private static byte[] Key(int i) => DbTestUtil.B($"wal{i:D5}");

    /// <summary>Values from 100 to ~3 KB, so some records span log blocks.</summary>
    private static byte[] Value(int i) => DbTestUtil.B($"value-{i}-" + new string((char)('a' + i % 26), 100 + i * 37 % 3000));

    /// <summary>
    /// Writes <see cref="Writes"/> puts, one WAL record each, into a database that never flushes,
    /// and closes it. Returns the log and the end offset of each write's record.
    /// </summary>
    private static (FaultInjectionFileSystem Fs, string Log, long[] Ends) BuildLog()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        var ends = new long[Writes];
        string log;
        using (KvDb db = KvDb.Open(DbTestUtil.DbPath, Options(fs, WalRecoveryMode.AbsoluteConsistency)))
        {
            List<string> logs = DbTestUtil.ListFiles(fs, DbTestUtil.DbPath).Logs;
            Assert.Single(logs);
            log = Path.Combine(DbTestUtil.DbPath, logs[0]);
            for (int i = 0; i < Writes; i++)
            {
                db.Put(Key(i), Value(i));
                ends[i] = fs.GetFileSize(log);
            }
        }
        Assert.Equal(ends[^1], fs.ReadAllBytes(log).Length);
        Assert.True(ends[^1] > 4 * BlockSize, "the log should span several blocks");
        return (fs, log, ends);
    }

    /// <summary>Flips one bit in the payload of write <paramref name="index"/>'s first fragment; returns the offset.</summary>
    private static long FlipInRecord(FaultInjectionFileSystem fs, string log, long[] ends, int index)
    {
        long start = index == 0 ? 0 : ends[index - 1];
        // Skip to the next block when the first fragment would be too short to hold the target.
        if (start % BlockSize > BlockSize - 64)
        {
            start = (start / BlockSize + 1) * BlockSize;
        }
        long offset = start + 7 + 40;
        Assert.True(offset < ends[index], "the flip must land inside the record");
        byte[] bytes = fs.ReadAllBytes(log);
        bytes[offset] ^= 0x10;
        fs.WriteAllBytes(log, bytes);
        return offset;
    }

    private static void AssertExactlyPrefix(KvDb db, int count, string context)
    {
        SortedDictionary<string, string> all = DbTestUtil.ReadAll(db);
        Assert.True(count == all.Count, $"{context}: expected the first {count} writes, found {all.Count} keys");
        for (int i = 0; i < count; i++)
        {
            Assert.Equal(Value(i), db.Get(Key(i)));
        }
    }

    private static KvOptions Options(FaultInjectionFileSystem fs, WalRecoveryMode mode) => new()
    {
        FileSystem = fs,
        WriteBufferSize = NoFlushWriteBuffer,
        WalRecoveryMode = mode,
    };

    private static KvDb Open(FaultInjectionFileSystem fs, WalRecoveryMode mode) =>
        KvDb.Open(DbTestUtil.DbPath, Options(fs, mode));
}
