using System.Text;
using KvEngine.Storage;
using KvEngine.Tests.Db;
using KvEngine.Versions;

using static KvEngine.Tests.Compaction.CompactionTestUtil;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Tests.Compaction;

/// <summary>
/// Universal compaction in a database: random Put/Delete/DeleteRange/Merge with snapshots held
/// across compactions, manual compactions and reopens agree with a model; compression_size_percent
/// and trivial moves act on the files written; a manual compaction merges everything into the last
/// level.
/// </summary>
public sealed class UniversalCompactionTests
{
    private readonly FaultInjectionFileSystem _fs = new();

    public UniversalCompactionTests() => _fs.CreateDirectory("/u");

    private KvOptions Universal(bool autoCompactions = true) => new()
    {
        FileSystem = _fs,
        WriteBufferSize = 16 << 10,
        TargetFileSizeBase = 8 << 10,
        Level0FileNumCompactionTrigger = 3,
        DisableAutoCompactions = !autoCompactions,
        BlockSize = 1024,
        CompactionStyle = CompactionStyle.Universal,
        MergeOperator = new StringAppendOperator((byte)','),
    };

    public static TheoryData<int, string> ModelCases() => new()
    {
        { 1, "default" },
        { 2, "trivial-similar" },
        { 3, "narrow-uncompressed" },
    };

    [Theory]
    [MemberData(nameof(ModelCases))]
    public void AgreesWithModelUnderUniversalCompaction(int seed, string variant)
    {
        KvOptions options = Universal();
        switch (variant)
        {
            case "trivial-similar":
                options.CompactionOptionsUniversal = new CompactionOptionsUniversal
                {
                    AllowTrivialMove = true,
                    StopStyle = CompactionStopStyle.SimilarSize,
                    SizeRatio = 10,
                };
                break;
            case "narrow-uncompressed":
                options.CompactionOptionsUniversal = new CompactionOptionsUniversal
                {
                    MaxMergeWidth = 2,
                    CompressionSizePercent = 30,
                    MaxSizeAmplificationPercent = 50,
                };
                break;
        }
        var rng = new Random(seed);
        var model = new SortedDictionary<byte[], byte[]>(ByteArrayComparer.Instance);
        var snapshots = new ModelSnapshots();
        KvDb db = KvDb.Open("/u/db", options);
        long compactions = 0;
        var levelsSeen = new HashSet<int>();
        try
        {
            for (int op = 0; op < 10_000; op++)
            {
                int dice = rng.Next(1000);
                string where = $"{variant} seed {seed} op {op}";
                byte[] k = Key(rng);
                if (dice < 450)
                {
                    byte[] v = Value(rng);
                    db.Put(k, v);
                    model[k] = v;
                }
                else if (dice < 550)
                {
                    byte[] operand = Encoding.ASCII.GetBytes($"m{op}");
                    db.Merge(k, operand);
                    model[k] = model.TryGetValue(k, out byte[]? old) ? [.. old, (byte)',', .. operand] : operand;
                }
                else if (dice < 650)
                {
                    db.Delete(k);
                    model.Remove(k);
                }
                else if (dice < 660)
                {
                    byte[] end = Key(rng);
                    (byte[] a, byte[] b) = ByteArrayComparer.Instance.Compare(k, end) <= 0 ? (k, end) : (end, k);
                    db.DeleteRange(a, b);
                    foreach (byte[] gone in model.Keys.Where(x => ByteArrayComparer.Instance.Compare(x, a) >= 0 && ByteArrayComparer.Instance.Compare(x, b) < 0).ToList())
                    {
                        model.Remove(gone);
                    }
                }
                else if (dice < 860)
                {
                    model.TryGetValue(k, out byte[]? want);
                    Assert.True(Same(want, db.Get(k)), $"{where}: Get differs for {Encoding.ASCII.GetString(k)}");
                }
                else if (dice < 870)
                {
                    CompactionModelTests.CheckScan(db, model, null, where);
                }
                else if (dice < 890)
                {
                    snapshots.TakeOrRelease(db, model, rng, 3);
                }
                else if (dice < 960)
                {
                    if (snapshots.Count > 0)
                    {
                        (Snapshot snap, SortedDictionary<byte[], byte[]> state) = snapshots.Pick(rng);
                        state.TryGetValue(k, out byte[]? want);
                        Assert.True(Same(want, db.Get(k, new ReadOptions { Snapshot = snap })), $"{where}: snapshot Get differs");
                        if (rng.Next(20) == 0)
                        {
                            CompactionModelTests.CheckScan(db, state, snap, where + " (snapshot)");
                        }
                    }
                }
                else if (dice < 963)
                {
                    db.CompactRange(null, null);
                    Version v = db.Impl.Versions.Current;
                    for (int level = 0; level < Version.NumLevels - 1; level++)
                    {
                        Assert.True(v.NumFiles(level) == 0, $"{where}: level {level} not empty after a full manual compaction");
                    }
                }
                else if (dice < 965 && rng.Next(3) == 0)
                {
                    snapshots.ReleaseAll();
                    compactions += db.Counters.Compactions;
                    db.Dispose();
                    db = KvDb.Open("/u/db", options);
                    CompactionModelTests.CheckScan(db, model, null, where + " after reopen");
                }
                for (int level = 1; level < Version.NumLevels; level++)
                {
                    if (db.Impl.Versions.Current.NumFiles(level) > 0)
                    {
                        levelsSeen.Add(level);
                    }
                }
            }
            CompactionModelTests.CheckScan(db, model, null, "final");
            foreach ((Snapshot s, SortedDictionary<byte[], byte[]> state) in snapshots.Held)
            {
                CompactionModelTests.CheckScan(db, state, s, "final snapshot");
            }
            WaitForCompactions(db);
            compactions += db.Counters.Compactions;
            Assert.True(compactions > 20, $"only {compactions} compactions ran");
            Assert.Contains(Version.NumLevels - 1, levelsSeen); // size amplification merged into the last level
        }
        finally
        {
            snapshots.ReleaseAll();
            db.Dispose();
        }
        using (KvDb again = KvDb.Open("/u/db", options))
        {
            CompactionModelTests.CheckScan(again, model, null, "after final reopen");
        }
        CompactionModelTests.CheckNoLeakedTables(_fs, "/u/db", options);
    }

    [Theory]
    [InlineData(-1, "Snappy")]
    [InlineData(1, "NoCompression")]
    public void CompressionSizePercentWritesNewerRunsUncompressed(int percent, string expected)
    {
        KvOptions o = Universal(autoCompactions: false);
        o.CompactionOptionsUniversal.CompressionSizePercent = percent;
        o.WriteBufferSize = 64 << 10;
        o.TargetFileSizeBase = 1 << 20; // one file per run
        using KvDb db = KvDb.Open("/u/db", o);
        Fill(db, "a", 400);
        db.CompactRange(null, null); // one large run in level 6
        Fill(db, "b", 20);
        Fill(db, "c", 20);
        Fill(db, "d", 20);
        // Runs: three small level-0 files over the level-6 run: size ratio merges the three into level 5.
        Assert.Equal(1, db.Impl.RunCompactionsInline());
        FileMetaData merged = Assert.Single(db.Impl.Versions.Current.Files(5));
        Assert.Equal(expected, Properties(db, merged).CompressionName);
        Assert.Equal("Snappy", Properties(db, Assert.Single(db.Impl.Versions.Current.Files(6))).CompressionName);
    }

    [Fact]
    public void NonOverlappingRunsMoveTriviallyWhenAllowed()
    {
        KvOptions o = Universal(autoCompactions: false);
        o.CompactionOptionsUniversal.AllowTrivialMove = true;
        using KvDb db = KvDb.Open("/u/db", o);
        Fill(db, "a", 20);
        Fill(db, "b", 20);
        Fill(db, "c", 20);
        long moves = db.Counters.TrivialMoves;
        Assert.Equal(1, db.Impl.RunCompactionsInline()); // size amp: every run, to level 6, moved
        Assert.Equal(moves + 1, db.Counters.TrivialMoves);
        Assert.Equal(3, Files(db, 6));
        Assert.StartsWith("va7x", Encoding.ASCII.GetString(db.Get(Encoding.ASCII.GetBytes("a0007"))!), StringComparison.Ordinal);
    }

    [Fact]
    public void ManualCompactionMergesEveryLevelIntoTheLastOne()
    {
        using KvDb db = KvDb.Open("/u/db", Universal(autoCompactions: false));
        Fill(db, "a", 50);
        db.CompactRange(null, null);
        Fill(db, "a", 50); // overwrites
        Fill(db, "b", 50);
        db.Impl.CompactLevel(0, 3, null, null);
        Fill(db, "c", 50);
        Assert.True(Files(db, 0) > 0 && Files(db, 3) > 0 && Files(db, 6) > 0);
        db.CompactRange(Encoding.ASCII.GetBytes("c"), Encoding.ASCII.GetBytes("d")); // the range does not matter
        Version v = db.Impl.Versions.Current;
        for (int level = 0; level < Version.NumLevels - 1; level++)
        {
            Assert.Equal(0, v.NumFiles(level));
        }
        Assert.Equal(150, Entries(db, _fs, 6).Count); // one version per key: the overwrites are gone
    }

    [Fact]
    public void IngestionKeepsSortedRunsOrderedByAge()
    {
        using KvDb db = KvDb.Open("/u/db", Universal(autoCompactions: false));
        Fill(db, "a", 20);
        using (Snapshot keep = db.GetSnapshot()) // the level-4 data keeps its sequence numbers
        {
            db.Impl.CompactLevel(0, 4, null, null);
        }
        ulong levelLargest = Assert.Single(db.Impl.Versions.Current.Files(4)).LargestSeqno;
        Assert.NotEqual(0UL, levelLargest);
        _fs.CreateDirectory("/x");
        using (var writer = new SstFileWriter(new ColumnFamilyOptions(), _fs, SstFileWriter.UnknownColumnFamilyId, ""))
        {
            writer.Open("/x/z.sst");
            writer.Put(Encoding.ASCII.GetBytes("z1"), Encoding.ASCII.GetBytes("ingested"));
            writer.Finish();
        }
        db.IngestExternalFile(["/x/z.sst"], new IngestExternalFileOptions());
        // Not the empty last level (older than everything), but beside the newest non-empty level,
        // with its newest sequence number (RocksDB 7.8's universal ingestion).
        FileMetaData ingested = Assert.Single(db.Impl.Versions.Current.Files(4), f => f.LargestSeqno == levelLargest && f.SmallestSeqno == levelLargest);
        Assert.Equal("z1", Encoding.ASCII.GetString(InternalKeysUserKey(ingested.Smallest)));
        Assert.Equal(0, Files(db, 6));
        Assert.Equal("ingested", Encoding.ASCII.GetString(db.Get(Encoding.ASCII.GetBytes("z1"))!));
    }

    private static byte[] InternalKeysUserKey(byte[] internalKey) => KvEngine.Format.InternalKeys.UserKey(internalKey).ToArray();

    private static void Fill(KvDb db, string prefix, int keys)
    {
        for (int i = 0; i < keys; i++)
        {
            db.Put(Encoding.ASCII.GetBytes($"{prefix}{i:D4}"), Encoding.ASCII.GetBytes($"v{prefix}{i}" + new string('x', 100)));
        }
        db.Flush();
    }

    private KvEngine.Table.TableProperties Properties(KvDb db, FileMetaData f)
    {
        string path = FileNames.TableFile(db.Path, f.Number);
        using var reader = KvEngine.Table.TableReader.Open(_fs.OpenRandomAccess(path), (long)f.FileSize, new KvEngine.Table.TableOptions(), path);
        return reader.Properties;
    }

    private static byte[] Key(Random rng) => Encoding.ASCII.GetBytes($"k{rng.Next(2000) * 7919 % 2000:D5}");

    private static byte[] Value(Random rng)
    {
        var v = new byte[rng.Next(10, 200)];
        rng.NextBytes(v);
        return v;
    }

    private static bool Same(byte[]? a, byte[]? b) => a == null ? b == null : b != null && a.AsSpan().SequenceEqual(b);
}
