using System.Text;
using KvEngine.Storage;

namespace KvEngine.Tests.Db;

/// <summary>
/// Damaged CURRENT and MANIFEST files at open. The MANIFEST is read strictly: any damage is a
/// <see cref="KvCorruptionException"/> at open, except an incomplete final record (a write cut
/// short, never acknowledged), which is ignored — the database opens in the state the complete
/// records describe. Two kinds of single-bit damage are indistinguishable from an end of log and
/// give that earlier state too, exactly as in RocksDB 7.8: a length enlarged past the end of the
/// file (a torn write), and a record type turned recyclable (5..8: a leftover of a reused file).
/// </summary>
public sealed class ManifestCorruptionTests
{
    [Fact]
    public void IntactDatabaseOpensWithTheLatestState()
    {
        Fixture f = Fixture.Build();
        using KvDb db = f.Open();
        Assert.Equal(f.States[2], DbTestUtil.ReadAll(db));
    }

    /// <summary>
    /// The last record is cut. Here the WAL its flush made obsolete was deleted at close (a real
    /// torn write would have kept it, never having been acknowledged), so the state is the
    /// previous record's.
    /// </summary>
    [Fact]
    public void IncompleteFinalRecordIsIgnored()
    {
        Fixture f = Fixture.Build();
        foreach (long cut in new[] { f.Starts[2] + 3, f.Starts[2] + 7, (f.Starts[2] + f.Size) / 2, f.Size - 1 })
        {
            f.Snapshot.Restore(f.Fs);
            f.Fs.WriteAllBytes(f.Manifest, f.Snapshot.Bytes(f.ManifestName).AsSpan(0, (int)cut));
            using KvDb db = f.Open();
            Assert.Equal(f.States[1], DbTestUtil.ReadAll(db));
        }
    }

    [Theory]
    [InlineData(0)]
    [InlineData(3)]
    [InlineData(20)]
    public void ManifestWithoutOneCompleteRecordIsCorrupt(int length)
    {
        Fixture f = Fixture.Build();
        f.Fs.WriteAllBytes(f.Manifest, f.Snapshot.Bytes(f.ManifestName).AsSpan(0, length));
        Assert.Throws<KvCorruptionException>(() => f.Open().Dispose());
    }

    /// <summary>Every byte of the MANIFEST, one bit flipped at a time.</summary>
    [Fact]
    public void EveryBitFlipIsCorruptionOrATornTailState()
    {
        Fixture f = Fixture.Build();
        byte[] original = f.Snapshot.Bytes(f.ManifestName);
        int opened = 0;
        for (int offset = 0; offset < original.Length; offset++)
        {
            f.Snapshot.Restore(f.Fs);
            byte[] damaged = (byte[])original.Clone();
            damaged[offset] ^= (byte)(1 << (offset * 3 % 8));
            f.Fs.WriteAllBytes(f.Manifest, damaged);
            SortedDictionary<string, string> content;
            try
            {
                using KvDb db = f.Open();
                content = DbTestUtil.ReadAll(db);
            }
            catch (KvCorruptionException)
            {
                continue;
            }
            // Opening is allowed only when the flip made a record's length run past the end of
            // the file (a torn write), or made its type a recyclable one (5..8), which a reader
            // takes for a leftover of the file's previous use: in both cases that record and all
            // after it are the end of the log, as in RocksDB.
            int record = Array.FindLastIndex(f.Starts, s => s <= offset);
            long inRecord = offset - f.Starts[record];
            bool endOfLog = inRecord is 4 or 5 || (inRecord == 6 && damaged[offset] is >= 5 and <= 8);
            Assert.True(endOfLog && record > 0,
                $"a flip at {offset} (record {record}, byte {inRecord}) was not detected");
            Assert.Equal(f.States[record - 1], content);
            opened++;
        }
        Assert.True(opened <= 2 * 3, $"{opened} flips opened: at most the length and type bytes of two records may");
    }

    [Theory]
    [InlineData("")]
    [InlineData("\n")]
    [InlineData("garbage")]
    [InlineData("garbage\n")]
    [InlineData("MANIFEST-000999\n")]
    [InlineData("MANIFEST-\n")]
    [InlineData("MANIFEST-00000x\n")]
    [InlineData("000005.sst\n")]
    [InlineData("../MANIFEST-000001\n")]
    [InlineData("MANIFEST-000001 \n")]
    public void GarbageCurrentIsCorrupt(string content)
    {
        Fixture f = Fixture.Build();
        f.Fs.WriteAllBytes(Path.Combine(DbTestUtil.DbPath, "CURRENT"), Encoding.ASCII.GetBytes(content));
        Assert.Throws<KvCorruptionException>(() => f.Open().Dispose());
    }

    [Fact]
    public void BinaryCurrentIsCorrupt()
    {
        Fixture f = Fixture.Build();
        f.Fs.WriteAllBytes(Path.Combine(DbTestUtil.DbPath, "CURRENT"), new byte[] { 0xFF, 0x00, 0x4D, 0x0A });
        Assert.Throws<KvCorruptionException>(() => f.Open().Dispose());
    }

    [Fact]
    public void CurrentNamingAMissingManifestIsCorrupt()
    {
        Fixture f = Fixture.Build();
        f.Fs.DeleteFile(f.Manifest);
        Assert.Throws<KvCorruptionException>(() => f.Open().Dispose());
    }

    [Fact]
    public void MissingCurrentWithoutCreateIfMissingIsRefused()
    {
        Fixture f = Fixture.Build();
        f.Fs.DeleteFile(Path.Combine(DbTestUtil.DbPath, "CURRENT"));
        KvOptions o = f.Options();
        o.CreateIfMissing = false;
        Assert.Throws<KvException>(() => KvDb.Open(DbTestUtil.DbPath, o).Dispose());
    }

    /// <summary>
    /// Three states: after session 1 (its WAL replayed into a table at the next open: the
    /// MANIFEST's first record), after a Flush of more writes (second record), after another
    /// (third record).
    /// </summary>
    private sealed class Fixture
    {
        public required FaultInjectionFileSystem Fs { get; init; }

        public required string ManifestName { get; init; }

        public string Manifest => Path.Combine(DbTestUtil.DbPath, ManifestName);

        public required long[] Starts { get; init; }

        public required long Size { get; init; }

        public required SortedDictionary<string, string>[] States { get; init; }

        public required FsSnapshot Snapshot { get; init; }

        public KvOptions Options() => new() { FileSystem = Fs, WriteBufferSize = 1 << 20 };

        public KvDb Open() => KvDb.Open(DbTestUtil.DbPath, Options());

        public static Fixture Build()
        {
            FaultInjectionFileSystem fs = DbTestUtil.NewFs();
            var o = new KvOptions { FileSystem = fs, WriteBufferSize = 1 << 20 };
            var model = new SortedDictionary<string, string>(StringComparer.Ordinal);
            var states = new SortedDictionary<string, string>[3];
            using (KvDb db = KvDb.Open(DbTestUtil.DbPath, o))
            {
                Write(db, model, 0, 50, "x", deleteFrom: 0, deleteTo: 0);
            }
            states[0] = new SortedDictionary<string, string>(model, StringComparer.Ordinal);
            var starts = new long[3];
            long size;
            string manifestName;
            using (KvDb db = KvDb.Open(DbTestUtil.DbPath, o))
            {
                manifestName = Path.GetFileName(DbTestUtil.CurrentManifest(fs, DbTestUtil.DbPath));
                string manifest = Path.Combine(DbTestUtil.DbPath, manifestName);
                starts[1] = fs.GetFileSize(manifest);
                Write(db, model, 25, 75, "a", deleteFrom: 0, deleteTo: 10);
                db.Flush();
                states[1] = new SortedDictionary<string, string>(model, StringComparer.Ordinal);
                starts[2] = fs.GetFileSize(manifest);
                Write(db, model, 50, 100, "b", deleteFrom: 30, deleteTo: 35);
                db.Flush();
                states[2] = new SortedDictionary<string, string>(model, StringComparer.Ordinal);
                size = fs.GetFileSize(manifest);
            }
            Assert.True(starts[1] > 0 && starts[2] > starts[1] && size > starts[2]);
            Assert.Equal(size, fs.ReadAllBytes(Path.Combine(DbTestUtil.DbPath, manifestName)).Length);
            return new Fixture
            {
                Fs = fs,
                ManifestName = manifestName,
                Starts = starts,
                Size = size,
                States = states,
                Snapshot = FsSnapshot.Take(fs, DbTestUtil.DbPath),
            };
        }

        private static void Write(KvDb db, SortedDictionary<string, string> model, int from, int to, string tag, int deleteFrom, int deleteTo)
        {
            for (int i = from; i < to; i++)
            {
                string k = $"m{i:D3}";
                string v = $"{tag}{i}-" + new string('v', i % 40);
                db.Put(DbTestUtil.B(k), DbTestUtil.B(v));
                model[k] = v;
            }
            for (int i = deleteFrom; i < deleteTo; i++)
            {
                string k = $"m{i:D3}";
                db.Delete(DbTestUtil.B(k));
                model.Remove(k);
            }
        }
    }
}
