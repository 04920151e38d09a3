using KvEngine.Compaction;
using KvEngine.Storage;

using static KvEngine.Tests.Compaction.CompactionTestUtil;

namespace KvEngine.Tests.Compaction;

/// <summary>
/// Read-triggered compaction of level 0 (<see cref="Level0ReadCharges"/>): Gets that search
/// level-0 files in vain get them compacted once the misses cost what the compaction would; with
/// the option off, or with whole-key filters answering the Gets, level 0 stays.
/// </summary>
public sealed class ReadTriggeredCompactionTests
{
    private const int Keys = 2000;

    // Reads that leave the block cache alone: each Get reads its blocks from the file (a cached
    // block costs little and is not charged), so the charges are exact.
    private static readonly ReadOptions s_uncached = new() { FillCache = false };

    private readonly FaultInjectionFileSystem _fs = new();

    public ReadTriggeredCompactionTests() => _fs.CreateDirectory("/r");

    [Fact]
    public void ChargesRequestOnceAndPauseWhileLevel0Compacts()
    {
        var charges = new Level0ReadCharges();
        Assert.False(charges.Charge(3, budget: 10));
        Assert.False(charges.Charge(6, budget: 10));
        Assert.True(charges.Charge(2, budget: 10)); // 11: this charge reached it
        Assert.True(charges.Requested);
        Assert.False(charges.Charge(5, budget: 10)); // requested already: nobody wakes the threads again
        Assert.Equal(11, charges.Misses);

        charges.BeginLevel0Compaction();
        Assert.False(charges.Requested);
        Assert.False(charges.Charge(50, budget: 10)); // the files it takes: not charged
        Assert.Equal(0, charges.Misses);
        charges.EndLevel0Compaction();
        Assert.False(charges.Requested);

        // A budget that shrank below what was charged (a smaller read state) still requests.
        Assert.False(charges.Charge(8, budget: 10));
        Assert.True(charges.Charge(1, budget: 5));
    }

    [Fact]
    public void DisabledChargesGiveReadStatesNoBudget()
    {
        var charges = new Level0ReadCharges();
        Assert.False(charges.IsDisabled);
        charges.Disable();
        Assert.True(charges.IsDisabled);
    }

    /// <summary>The budget is what a level-0 compaction reads (level 0 and the base-level files it overlaps) over the bytes a miss is charged as.</summary>
    [Fact]
    public void TheBudgetIsTheCompactionsInputOverTheChargePerMiss()
    {
        var options = new CompactionOptions { ReadTriggeredCompactionBytesPerMiss = 100 };
        KvEngine.Versions.Version v = MakeVersion(
            (0, File(10, "b", "f", 1000, seq: 9)),
            (0, File(11, "c", "g", 2000, seq: 8)),
            (1, File(1, "a", "c", 3000)),
            (1, File(2, "d", "e", 4000)),
            (1, File(3, "x", "z", 50_000))); // outside level 0's range: not read
        Assert.Equal((1000 + 2000 + 3000 + 4000) / 100, Level0ReadCharges.Budget(v, options));
        Assert.Equal(long.MaxValue, Level0ReadCharges.Budget(v, options with { ReadTriggeredCompactionBytesPerMiss = 0 }));
        Assert.Equal(long.MaxValue, Level0ReadCharges.Budget(v, options with { Style = CompactionStyle.Fifo }));
        Assert.Equal(long.MaxValue, Level0ReadCharges.Budget(MakeVersion((1, File(1, "a", "c", 3000))), options));
    }

    [Fact]
    public void GetsThatMissLevel0FilesCompactThem()
    {
        using KvDb db = OpenWithTwoLevel0Files(bloomBitsPerKey: 0, bytesPerMiss: 1024, out KvOptions o);
        long compactions = db.Counters.Compactions;
        // Every key lives in the base level: a Get first searches, in vain, the level-0 file whose range holds it.
        for (int i = 0; i < Keys; i++)
        {
            Assert.Equal(Value(i, 0), db.Get(Key(i), s_uncached));
        }
        WaitForCompactions(db);
        Assert.Equal(0, Files(db, 0));
        Assert.True(db.Counters.Compactions > compactions);
        Assert.Equal(1, db.Counters.ReadTriggeredCompactions);
        Assert.Contains("Read-triggered compactions of level 0: 1", db.GetProperty("rocksdb.stats"), StringComparison.Ordinal);
        for (int i = 0; i < Keys; i++)
        {
            Assert.Equal(Value(i, 0), db.Get(Key(i), s_uncached));
        }
        for (int i = 0; i < 50; i++)
        {
            Assert.Equal(Value(i, 1), db.Get(Key(Keys + i), s_uncached));
        }
    }

    [Fact]
    public void OffLeavesLevel0Alone()
    {
        using KvDb db = OpenWithTwoLevel0Files(bloomBitsPerKey: 0, bytesPerMiss: 0, out _);
        for (int i = 0; i < Keys; i++)
        {
            Assert.Equal(Value(i, 0), db.Get(Key(i), s_uncached));
        }
        WaitForCompactions(db);
        Assert.Equal(2, Files(db, 0));
        Assert.Equal(0, db.Impl.DefaultFamily.Level0Reads.Misses);
        Assert.Equal(0, db.Counters.ReadTriggeredCompactions);
        Assert.DoesNotContain("Read-triggered", db.GetProperty("rocksdb.stats"), StringComparison.Ordinal);
    }

    /// <summary>Whole-key filters answer Gets of keys a level-0 file lacks without a data block read: nothing is charged but false positives.</summary>
    [Fact]
    public void FilteredFilesAreChargedOnlyForFalsePositives()
    {
        using KvDb db = OpenWithTwoLevel0Files(bloomBitsPerKey: 10, bytesPerMiss: 1024, out _);
        for (int i = 0; i < Keys; i++)
        {
            Assert.Equal(Value(i, 0), db.Get(Key(i), s_uncached));
        }
        // 2,000 Gets past two files: ~1% false positives each, so ~40 charges; far from every Get.
        Assert.InRange(db.Impl.DefaultFamily.Level0Reads.Misses, 0, Keys / 10);
        WaitForCompactions(db);
        Assert.Equal(2, Files(db, 0));
    }

    /// <summary>
    /// A Get of a key no table holds, searched in the only file covering it, would search one file
    /// after a compaction too: it saves nothing and is charged nothing (without filters, so every
    /// such Get reads a data block).
    /// </summary>
    [Fact]
    public void AGetOfAKeyNoTableHoldsChargesOneSearchLess()
    {
        var o = new KvOptions { FileSystem = _fs, BlockSize = 1024, BloomBitsPerKey = 0 };
        using KvDb db = KvDb.Open("/r/db", o);
        for (int i = 0; i < Keys; i += 2)
        {
            db.Put(Key(i), Value(i, 0));
        }
        db.Flush();
        Assert.Equal(1, Files(db, 0));
        for (int i = 1; i < Keys; i += 2)
        {
            Assert.Null(db.Get(Key(i), s_uncached));
        }
        Assert.Equal(0, db.Impl.DefaultFamily.Level0Reads.Misses);
        WaitForCompactions(db);
        Assert.Equal(1, Files(db, 0));

        // Two files over the same range: a Get of an absent key reads both, and a compaction would
        // leave one read: one miss each.
        for (int i = 0; i < Keys; i += 2)
        {
            db.Put(Key(i), Value(i, 1));
        }
        db.Flush();
        Assert.Equal(2, Files(db, 0));
        for (int i = 1; i < 21; i += 2)
        {
            Assert.Null(db.Get(Key(i), s_uncached));
        }
        Assert.Equal(10, db.Impl.DefaultFamily.Level0Reads.Misses);
    }

    /// <summary>MultiGets charge level-0 files searched in vain as Gets do, and get them compacted.</summary>
    [Fact]
    public void MultiGetsThatMissLevel0FilesCompactThem()
    {
        using KvDb db = OpenWithTwoLevel0Files(bloomBitsPerKey: 0, bytesPerMiss: 1024, out _);
        for (int first = 0; first < Keys; first += 20)
        {
            var keys = new List<byte[]>();
            for (int i = first; i < first + 20; i++)
            {
                keys.Add(Key(i));
            }
            byte[]?[] values = db.MultiGet(keys, s_uncached);
            for (int i = 0; i < 20; i++)
            {
                Assert.Equal(Value(first + i, 0), values[i]);
            }
        }
        WaitForCompactions(db);
        Assert.Equal(0, Files(db, 0));
        Assert.Equal(1, db.Counters.ReadTriggeredCompactions);
    }

    /// <summary>
    /// A MultiGet charges a filtered level-0 file only for the keys its filter let through: the
    /// blocks read for the keys found in it are not charged to the many keys the filter answered.
    /// </summary>
    [Fact]
    public void FilteredFilesAreChargedOnlyForFalsePositivesInAMultiGet()
    {
        using KvDb db = OpenWithTwoLevel0Files(bloomBitsPerKey: 10, bytesPerMiss: 1 << 20, out _); // a budget never reached here
        var keys = new List<byte[]>();
        for (int i = 0; i < 50; i++)
        {
            keys.Add(Key(Keys + i)); // in the two level-0 files
        }
        for (int i = 0; i < 450; i++)
        {
            keys.Add(Key(i * 4)); // in the base level; each level-0 file's range holds them
        }
        byte[]?[] values = db.MultiGet(keys, s_uncached);
        for (int i = 0; i < 50; i++)
        {
            Assert.Equal(Value(i, 1), values[i]);
        }
        for (int i = 0; i < 450; i++)
        {
            Assert.Equal(Value(i * 4, 0), values[50 + i]);
        }
        // ~1% false positives of 475 keys per file: a few charges. Spread over every key a file's
        // range holds, the blocks read for its 25 found keys would charge ~10 per file.
        Assert.InRange(db.Impl.DefaultFamily.Level0Reads.Misses, 0, 8);
    }

    /// <summary>
    /// A MultiGet of keys no table holds saves, after a compaction, all but one file's reads: over
    /// one level-0 file it is charged nothing, over two files about one file's blocks.
    /// </summary>
    [Fact]
    public void AMultiGetOfKeysNoTableHoldsChargesOneFileLess()
    {
        var o = new KvOptions { FileSystem = _fs, BlockSize = 1024, BloomBitsPerKey = 0 };
        using KvDb db = KvDb.Open("/r/db", o);
        for (int i = 0; i < Keys; i += 2)
        {
            db.Put(Key(i), Value(i, 0));
        }
        db.Flush();
        var absent = new List<byte[]>();
        for (int i = 1; i < 41; i += 2)
        {
            absent.Add(Key(i));
        }
        Assert.All(db.MultiGet(absent, s_uncached), Assert.Null);
        Assert.Equal(0, db.Impl.DefaultFamily.Level0Reads.Misses);

        for (int i = 0; i < Keys; i += 2)
        {
            db.Put(Key(i), Value(i, 1));
        }
        db.Flush();
        Assert.Equal(2, Files(db, 0));
        Assert.All(db.MultiGet(absent, s_uncached), Assert.Null);
        // 20 absent keys among 40 entries of ~220 B in 1 KiB blocks: ~9-11 blocks per file, one file's worth saved.
        Assert.InRange(db.Impl.DefaultFamily.Level0Reads.Misses, 5, 15);
    }

    /// <summary>A read-only database compacts nothing: its Gets charge nothing and nothing is reported pending.</summary>
    [Fact]
    public void AReadOnlyDatabaseChargesNothing()
    {
        using (KvDb db = OpenWithTwoLevel0Files(bloomBitsPerKey: 0, bytesPerMiss: 1024, out _))
        {
        }
        using KvDb readOnly = KvDb.OpenReadOnly("/r/db", new KvOptions { FileSystem = _fs, BloomBitsPerKey = 0 });
        for (int i = 0; i < Keys; i++)
        {
            Assert.Equal(Value(i, 0), readOnly.Get(Key(i), s_uncached));
        }
        Assert.Equal(0, readOnly.Impl.DefaultFamily.Level0Reads.Misses);
        Assert.Equal("0", readOnly.GetProperty("rocksdb.compaction-pending"));
    }

    /// <summary>A manual compaction of level 0 clears the charges: they were for the files it took.</summary>
    [Fact]
    public void AManualCompactionOfLevel0ClearsTheCharges()
    {
        using KvDb db = OpenWithTwoLevel0Files(bloomBitsPerKey: 0, bytesPerMiss: 1, out _); // a budget of every byte: never reached here
        for (int i = 0; i < 100; i++)
        {
            Assert.Equal(Value(i, 0), db.Get(Key(i), s_uncached));
        }
        Assert.True(db.Impl.DefaultFamily.Level0Reads.Misses > 0);
        db.CompactRange(null, null);
        Assert.Equal(0, Files(db, 0));
        Assert.Equal(0, db.Impl.DefaultFamily.Level0Reads.Misses);
    }

    /// <summary>
    /// Keys 0..Keys-1 compacted into the base level, then two level-0 files of other keys (below
    /// the trigger of four, so no size-triggered compaction comes).
    /// </summary>
    private KvDb OpenWithTwoLevel0Files(double bloomBitsPerKey, long bytesPerMiss, out KvOptions o)
    {
        o = new KvOptions
        {
            FileSystem = _fs,
            WriteBufferSize = 1 << 20,
            BlockSize = 1024,
            BloomBitsPerKey = bloomBitsPerKey,
            Level0FileNumCompactionTrigger = 4,
            ReadTriggeredCompactionBytesPerMiss = bytesPerMiss,
        };
        KvDb db = KvDb.Open("/r/db", o);
        for (int i = 0; i < Keys; i++)
        {
            db.Put(Key(i), Value(i, 0));
        }
        db.Flush();
        db.CompactRange(null, null);
        Assert.Equal(0, Files(db, 0));
        for (int file = 0; file < 2; file++)
        {
            for (int i = 0; i < 25; i++)
            {
                int k = Keys + (file * 25) + i;
                db.Put(Key(k), Value(k - Keys, 1));
            }
            db.Flush();
        }
        WaitForCompactions(db);
        Assert.Equal(2, Files(db, 0));
        return db;
    }

    // Level-0 keys (Keys and up) interleave with the base level's: a Get of a base-level key falls in a level-0 file's range.
    private static byte[] Key(int i) => i < Keys ? K($"key{i:D6}") : K($"key{(i - Keys) * 40:D6}x");

    private static byte[] Value(int i, int generation) => K($"value-{i}-{generation}-" + new string('v', 200));
}
