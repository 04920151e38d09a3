using KvEngine.Compaction;
using KvEngine.Versions;
using KvEngine.Tests.Db;

using static KvEngine.Tests.Compaction.CompactionTestUtil;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Tests.Compaction;

/// <summary>
/// Compaction picking counts what range tombstones may delete (RocksDB's
/// compensated_range_deletion_size): computed at flush and compaction, kept in the MANIFEST, and
/// added to the file's size in level scores and in the minimum-overlapping-ratio choice.
/// </summary>
public sealed class RangeDeletionCompensationTests
{
    private const long Mb = 1 << 20;

    [Fact]
    public void MinOverlappingRatioPrefersTheFileWhoseTombstonesCoverDeeperData()
    {
        var options = new CompactionOptions
        {
            Level0FileNumCompactionTrigger = 4,
            MaxBytesForLevelBase = 10 * Mb,
            MaxBytesForLevelMultiplier = 10,
            TargetFileSizeBase = 2 * Mb,
            MaxCompactionBytes = 50 * Mb,
        };
        // Level 1 holds 12 MiB (score 1.2); files 1 and 2 overlap the same next-level bytes.
        FileMetaData plain = File(1, "a", "b", 6 * Mb);
        FileMetaData tombstones = File(2, "c", "d", 6 * Mb);
        Version v = MakeVersion((1, plain), (1, tombstones), (2, File(20, "a", "b", 2 * Mb)), (2, File(21, "c", "d", 2 * Mb)));
        Assert.Equal(1UL, new CompactionPicker(options).Pick(v)!.StartInputs[0].Number); // tie: key order

        tombstones.CompensatedRangeDeletionSize = (ulong)(3 * Mb);
        Assert.Equal(2UL, new CompactionPicker(options).Pick(v)!.StartInputs[0].Number);
        Assert.True(new CompactionPicker(options).ComputeScores(v, LevelTargets.Compute(v, options))[1] > 1.4); // (12 + 3) / 10
    }

    [Fact]
    public void FlushEstimatesWhatItsTombstonesDeleteBelowAndTheManifestKeepsIt()
    {
        var fs = DbTestUtil.NewFs();
        KvOptions options = DbTestUtil.SmallOptions(fs, writeBufferSize: 1 << 20);
        options.DisableAutoCompactions = true;
        options.Compression = KvCompressionType.None;
        KvDb db = KvDb.Open("/db", options);
        try
        {
            var value = new byte[100];
            for (int i = 0; i < 4000; i++)
            {
                db.Put(DbTestUtil.B($"k{i:D5}"), value);
            }
            db.CompactRange(null, null); // about 450 KB below level 0
            db.DeleteRange(DbTestUtil.B("k01000"), DbTestUtil.B("k03000")); // half of it
            db.Put(DbTestUtil.B("x"), value);
            db.Flush();
            FileMetaData flushed = db.Impl.Versions.Current.Files(0)[0];
            long below = 0;
            for (int level = 1; level < Version.NumLevels; level++)
            {
                below += db.Impl.Versions.Current.LevelBytes(level);
            }
            Assert.InRange((long)flushed.CompensatedRangeDeletionSize, below * 4 / 10, below * 6 / 10);

            db.Dispose();
            db = KvDb.Open("/db", options);
            Assert.Equal(flushed.CompensatedRangeDeletionSize, db.Impl.Versions.Current.Files(0)[0].CompensatedRangeDeletionSize);
        }
        finally
        {
            db.Dispose();
        }
    }
}
