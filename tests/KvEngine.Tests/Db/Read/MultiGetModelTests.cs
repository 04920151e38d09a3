using System.Buffers;
using System.Text;
using KvEngine.Storage;

namespace KvEngine.Tests.Db.Read;

/// <summary>
/// MultiGet against Get as the oracle, and KeyMayExist's guarantee, on random databases: three
/// column families (uint64add merges in all; full filters, partitioned index and filters, no filter;
/// block cache or none; small blocks so batches span many data blocks), random puts, merges,
/// deletes, range deletions, snapshots, flushes, compactions (to level 1 and deeper, so a batch's
/// keys are spread over memtables, level 0 and sorted levels) and reopens. Each check draws a batch
/// of keys in random order with duplicates and absent keys (never written, or between written
/// ones), runs MultiGet through both API shapes, at the latest sequence or a snapshot, and compares
/// every result with Get at the same read options; then KeyMayExist must be true for every key Get
/// finds, with any value it reports equal to Get's. Deterministic per seed (no background compaction).
/// </summary>
public sealed class MultiGetModelTests
{
    private const int KeySpace = 300;
    private const int WrittenKeys = 240; // keys at and above are never written

    public static TheoryData<int> Seeds()
    {
        var data = new TheoryData<int>();
        for (int seed = 1; seed <= 8; seed++)
        {
            data.Add(seed);
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Seeds))]
    public void MultiGetEqualsGetAndKeyMayExistNeverMissesAPresentKey(int seed)
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/mg");
        using var cache = seed % 3 == 0 ? null : new KvBlockCache(seed % 3 == 1 ? 1 << 20 : 16 << 10);
        var options = new KvOptions
        {
            FileSystem = fs,
            MergeOperator = UInt64AddOperator.Instance,
            WriteBufferSize = (seed % 2 == 0 ? 8 : 24) << 10,
            MaxWriteBufferNumber = 3,
            DisableAutoCompactions = true,
            BlockSize = 256,
            TargetFileSizeBase = 4096,
            MaxBytesForLevelBase = 16384,
            BlockCache = cache,
            CreateMissingColumnFamilies = true,
        };
        ColumnFamilyDescriptor[] families =
        [
            new("partitioned", new ColumnFamilyOptions
            {
                MergeOperator = UInt64AddOperator.Instance,
                BlockSize = 256,
                IndexType = KvIndexType.TwoLevelIndexSearch,
                PartitionFilters = true,
                MetadataBlockSize = 256,
                BlockCache = cache,
                CacheIndexAndFilterBlocks = seed % 2 == 0,
                WriteBufferSize = 16 << 10,
                TargetFileSizeBase = 4096,
                MaxBytesForLevelBase = 16384,
            }),
            new("nofilter", new ColumnFamilyOptions
            {
                MergeOperator = UInt64AddOperator.Instance,
                BlockSize = 512,
                BloomBitsPerKey = 0,
                BlockCache = cache,
                WriteBufferSize = 12 << 10,
                TargetFileSizeBase = 4096,
                MaxBytesForLevelBase = 16384,
            }),
        ];
        var rng = new Random(seed);
        var snapshots = new List<Snapshot>();
        using var results = new MultiGetResults(initialKeyCapacity: 4, initialValueBytes: 16);
        KvDb db = KvDb.Open("/mg/db", options, DbTestUtil.WithDefault(options, families));
        try
        {
            for (int i = 0; i < 3000; i++)
            {
                ColumnFamilyHandle cf = PickFamily(db, rng);
                int dice = rng.Next(1000);
                if (dice < 250)
                {
                    db.Put(cf, Key(rng.Next(WrittenKeys)), UInt64AddOperator.Encode((ulong)rng.Next(1000)));
                }
                else if (dice < 450)
                {
                    db.Merge(cf, Key(rng.Next(WrittenKeys)), UInt64AddOperator.Encode((ulong)rng.Next(1, 100)));
                }
                else if (dice < 520)
                {
                    db.Delete(cf, Key(rng.Next(WrittenKeys)));
                }
                else if (dice < 540)
                {
                    int a = rng.Next(WrittenKeys);
                    db.DeleteRange(cf, Key(a), Key(a + rng.Next(1, 12)));
                }
                else if (dice < 800)
                {
                    Snapshot? snap = snapshots.Count > 0 && rng.Next(3) == 0 ? snapshots[rng.Next(snapshots.Count)] : null;
                    Check(db, cf, rng, results, snap == null ? null : new ReadOptions { Snapshot = snap }, $"seed {seed} op {i}");
                }
                else if (dice < 830)
                {
                    if (snapshots.Count < 3)
                    {
                        snapshots.Add(db.GetSnapshot());
                    }
                    else
                    {
                        int s = rng.Next(snapshots.Count);
                        snapshots[s].Dispose();
                        snapshots.RemoveAt(s);
                    }
                }
                else if (dice < 900)
                {
                    db.Flush(cf);
                }
                else if (dice < 950)
                {
                    db.Flush(cf);
                    if (rng.Next(2) == 0)
                    {
                        db.CompactRange(cf, null, null);
                    }
                    else
                    {
                        byte[] begin = Key(rng.Next(WrittenKeys));
                        db.CompactRange(cf, begin, null);
                    }
                }
                else if (dice < 960)
                {
                    foreach (Snapshot s in snapshots)
                    {
                        s.Dispose();
                    }
                    snapshots.Clear();
                    db.Dispose();
                    db = KvDb.Open("/mg/db", options, DbTestUtil.WithDefault(options, families));
                }
                else
                {
                    Check(db, cf, rng, results, null, $"seed {seed} op {i} (late)");
                }
            }
            foreach (string name in (string[])["default", "partitioned", "nofilter"])
            {
                ColumnFamilyHandle cf = name == "default" ? db.DefaultColumnFamily : db.GetColumnFamily(name)!;
                Check(db, cf, rng, results, null, $"seed {seed} final {name}", batchSize: KeySpace);
            }
        }
        finally
        {
            foreach (Snapshot s in snapshots)
            {
                s.Dispose();
            }
            db.Dispose();
        }
    }

    private static ColumnFamilyHandle PickFamily(KvDb db, Random rng) => rng.Next(3) switch
    {
        0 => db.DefaultColumnFamily,
        1 => db.GetColumnFamily("partitioned")!,
        _ => db.GetColumnFamily("nofilter")!,
    };

    private static void Check(KvDb db, ColumnFamilyHandle cf, Random rng, MultiGetResults results, ReadOptions? read, string where, int batchSize = 0)
    {
        int n = batchSize > 0 ? batchSize : rng.Next(1, 48);
        var keys = new byte[n][];
        for (int j = 0; j < n; j++)
        {
            keys[j] = rng.Next(8) switch
            {
                0 when j > 0 => keys[rng.Next(j)], // a duplicate
                1 => Encoding.ASCII.GetBytes($"k{rng.Next(KeySpace):D4}x"), // between written keys
                _ => Key(batchSize > 0 ? j : rng.Next(KeySpace)),
            };
        }
        var memories = new ReadOnlyMemory<byte>[n];
        for (int j = 0; j < n; j++)
        {
            memories[j] = keys[j];
        }
        db.MultiGet(cf, memories, results, read);
        byte[]?[] arrays = cf == db.DefaultColumnFamily && rng.Next(2) == 0 ? db.MultiGet(keys, read) : db.MultiGet(cf, keys, read);
        Assert.Equal(n, results.Count);
        var writer = new ArrayBufferWriter<byte>();
        for (int j = 0; j < n; j++)
        {
            byte[]? want = db.Get(cf, keys[j], read);
            string what = $"{where}: key {Encoding.ASCII.GetString(keys[j])} (#{j} of {n})";
            Assert.True(want == null ? !results.IsFound(j) : results.TryGetValue(j, out ReadOnlySpan<byte> got) && got.SequenceEqual(want),
                $"{what}: MultiGet {Show(results.ToArray(j))}, Get {Show(want)}");
            Assert.True(Same(want, arrays[j]), $"{what}: MultiGet (arrays) {Show(arrays[j])}, Get {Show(want)}");
            writer.ResetWrittenCount();
            bool may = db.KeyMayExist(cf, keys[j], writer, out bool valueFound, read);
            if (want != null)
            {
                Assert.True(may, $"{what}: KeyMayExist false for a present key");
            }
            if (valueFound)
            {
                Assert.True(may && want != null && writer.WrittenSpan.SequenceEqual(want), $"{what}: KeyMayExist's value {Show(writer.WrittenSpan.ToArray())}, Get {Show(want)}");
            }
        }
    }

    private static byte[] Key(int i) => Encoding.ASCII.GetBytes($"k{i:D4}");

    private static bool Same(byte[]? a, byte[]? b) => a == null ? b == null : b != null && a.AsSpan().SequenceEqual(b);

    private static string Show(byte[]? v) => v == null ? "(absent)" : Convert.ToHexString(v);
}
