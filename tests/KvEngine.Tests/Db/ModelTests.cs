using KvEngine.Storage;

namespace KvEngine.Tests.Db;

/// <summary>
/// Random operation sequences against the engine and an in-memory sorted model; they must agree
/// exactly on every Get, every iterator step, every snapshot read and after every reopen.
/// </summary>
public sealed class ModelTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-model-");

    public void Dispose() => _dir.Delete(recursive: true);

    public static TheoryData<int, string> Cases() => new()
    {
        { 1, "tiny-lz4" },
        { 2, "tiny-zstd" },
        { 3, "tiny-none-nofilter" },
        { 4, "crc32c-smallblocks" },
        { 5, "default" },
    };

    [Theory]
    [MemberData(nameof(Cases))]
    public void AgreesWithModelInMemoryFileSystem(int seed, string optionSet)
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/model");
        Run(seed, MakeOptions(optionSet, fs), "/model/db", 10_000);
    }

    [Fact]
    public void AgreesWithModelOnDisk()
    {
        Run(11, MakeOptions("tiny-lz4", LocalFileSystem.Instance), Path.Combine(_dir.FullName, "db"), 10_000);
    }

    internal static KvOptions MakeOptions(string optionSet, IFileSystem fs)
    {
        var o = new KvOptions { FileSystem = fs };
        switch (optionSet)
        {
            case "tiny-lz4":
                o.WriteBufferSize = 16 << 10;
                o.Compression = KvCompressionType.Lz4;
                break;
            case "tiny-zstd":
                o.WriteBufferSize = 16 << 10;
                o.Compression = KvCompressionType.Zstd;
                o.MaxWriteBufferNumber = 3;
                break;
            case "tiny-none-nofilter":
                o.WriteBufferSize = 8 << 10;
                o.Compression = KvCompressionType.None;
                o.BloomBitsPerKey = 0;
                break;
            case "crc32c-smallblocks":
                o.WriteBufferSize = 32 << 10;
                o.Checksum = KvChecksumType.Crc32C;
                o.BlockSize = 256;
                o.BlockRestartInterval = 4;
                break;
            case "default":
                break;
            default:
                throw new ArgumentException(optionSet);
        }
        return o;
    }

    private static void Run(int seed, KvOptions options, string path, int operations)
    {
        var rng = new Random(seed);
        var model = new SortedDictionary<byte[], byte[]>(ByteArrayComparer.Instance);
        var snapshots = new ModelSnapshots();
        KvDb db = KvDb.Open(path, options);
        try
        {
            for (int op = 0; op < operations; op++)
            {
                int dice = rng.Next(1000);
                if (dice < 400)
                {
                    byte[] k = RandomKey(rng);
                    byte[] v = RandomValue(rng);
                    db.Put(k, v);
                    model[k] = v;
                }
                else if (dice < 520)
                {
                    byte[] k = RandomKey(rng);
                    db.Delete(k);
                    model.Remove(k);
                }
                else if (dice < 600)
                {
                    using var batch = new WriteBatch();
                    var pending = new List<(byte[] K, byte[]? V)>();
                    int n = rng.Next(1, 20);
                    for (int i = 0; i < n; i++)
                    {
                        byte[] k = RandomKey(rng);
                        if (rng.Next(4) == 0)
                        {
                            batch.Delete(k);
                            pending.Add((k, null));
                        }
                        else
                        {
                            byte[] v = RandomValue(rng);
                            batch.Put(k, v);
                            pending.Add((k, v));
                        }
                    }
                    db.Write(batch, new WriteOptions { Sync = rng.Next(10) == 0 });
                    foreach ((byte[] k, byte[]? v) in pending)
                    {
                        if (v == null)
                        {
                            model.Remove(k);
                        }
                        else
                        {
                            model[k] = v;
                        }
                    }
                }
                else if (dice < 800)
                {
                    byte[] k = RandomKey(rng);
                    byte[]? got = db.Get(k);
                    model.TryGetValue(k, out byte[]? want);
                    Assert.True(Same(want, got), $"seed {seed} op {op}: Get({Hex(k)}) = {Hex(got)}, model {Hex(want)}");
                }
                else if (dice < 850)
                {
                    CheckIterator(db, model, rng, null, $"seed {seed} op {op}");
                }
                else if (dice < 870)
                {
                    snapshots.TakeOrRelease(db, model, rng, 4);
                }
                else if (dice < 930)
                {
                    if (snapshots.Count > 0)
                    {
                        (Snapshot snap, SortedDictionary<byte[], byte[]> state) = snapshots.Pick(rng);
                        byte[] k = RandomKey(rng);
                        state.TryGetValue(k, out byte[]? want);
                        byte[]? got = db.Get(k, new ReadOptions { Snapshot = snap });
                        Assert.True(Same(want, got), $"seed {seed} op {op}: snapshot Get({Hex(k)}) = {Hex(got)}, model {Hex(want)}");
                        if (rng.Next(5) == 0)
                        {
                            CheckIterator(db, state, rng, snap, $"seed {seed} op {op} (snapshot)");
                        }
                    }
                }
                else if (dice < 945)
                {
                    db.Flush();
                }
                else if (dice < 950)
                {
                    snapshots.ReleaseAll();
                    db.Dispose();
                    db = KvDb.Open(path, options);
                }
                else
                {
                    byte[] k = RandomKey(rng);
                    model.TryGetValue(k, out byte[]? want);
                    var w = new System.Buffers.ArrayBufferWriter<byte>();
                    bool found = db.TryGet(k, w);
                    Assert.Equal(want != null, found);
                    if (want != null)
                    {
                        Assert.Equal(want, w.WrittenSpan.ToArray());
                    }
                }
            }
            CheckIterator(db, model, rng, null, $"seed {seed} final");
            db.Dispose();
            db = KvDb.Open(path, options);
            CheckFullScan(db, model, $"seed {seed} after final reopen");
        }
        finally
        {
            snapshots.ReleaseAll();
            db.Dispose();
        }
    }

    private static void CheckFullScan(KvDb db, SortedDictionary<byte[], byte[]> model, string where)
    {
        using KvIterator it = db.NewIterator();
        it.SeekToFirst();
        foreach (KeyValuePair<byte[], byte[]> e in model)
        {
            Assert.True(it.Valid, $"{where}: iterator ended before {Hex(e.Key)}");
            Assert.Equal(Hex(e.Key), Hex(it.Key.ToArray()));
            Assert.Equal(e.Value, it.Value.ToArray());
            it.Next();
        }
        Assert.False(it.Valid, $"{where}: iterator has extra entries");
    }

    private static void CheckIterator(KvDb db, SortedDictionary<byte[], byte[]> model, Random rng, Snapshot? snap, string where) =>
        ModelIteratorCheck.Run(db, model, rng, snap, where, RandomKey, steps: 60, Hex);

    internal static byte[] RandomKey(Random rng)
    {
        // A few hundred distinct keys of varying length share prefixes, so blocks prefix-compress.
        int id = rng.Next(600);
        int len = 1 + (id % 24);
        var k = new byte[len];
        for (int i = 0; i < len; i++)
        {
            k[i] = (byte)('a' + ((id * 31 + i * 7) % 26));
        }
        k[0] = (byte)('a' + (id % 26));
        return k;
    }

    internal static byte[] RandomValue(Random rng)
    {
        int len = rng.Next(20) == 0 ? rng.Next(1000, 9000) : rng.Next(0, 120);
        var v = new byte[len];
        // Half random, half repetitive, so compression both succeeds and fails.
        if (rng.Next(2) == 0)
        {
            rng.NextBytes(v);
        }
        else
        {
            byte b = (byte)rng.Next(256);
            Array.Fill(v, b);
        }
        return v;
    }

    internal static bool Same(byte[]? a, byte[]? b) => a == null ? b == null : b != null && a.AsSpan().SequenceEqual(b);

    internal static string Hex(byte[]? b) => b == null ? "null" : Convert.ToHexString(b.Length > 40 ? b.AsSpan(0, 40) : b);
}
