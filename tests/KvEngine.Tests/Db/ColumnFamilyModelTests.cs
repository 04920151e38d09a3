using KvEngine.Storage;

namespace KvEngine.Tests.Db;

/// <summary>
/// Random operation sequences over several column families against one in-memory model per
/// family: puts, deletes, delete-ranges, batches spanning families, flushes of one family and of
/// all, compactions of one family, snapshots, create and drop (a dropped family's handle must throw
/// <see cref="ArgumentException"/>; a family re-created under the same name starts empty), clean
/// reopens with the right descriptors, and reopens after a process crash or a power loss on the
/// fault-injection file system (a power loss comes right after a Sync write, so the whole model must
/// survive it). Gets, TryGets and iterators in both directions, with and without snapshots, must
/// agree with the model. Deterministic for a seed: nothing depends on timing.
/// </summary>
public sealed class ColumnFamilyModelTests
{
    private const string DbPath = DbTestUtil.DbPath;
    private static readonly string[] s_names = ["one", "two", "three", "four", "five"];
    private static readonly WriteOptions s_sync = new() { Sync = true };
    private static readonly WriteOptions s_noSync = new();

    public static TheoryData<int, string> Cases() => new()
    {
        { 1, "mixed" },
        { 2, "mixed" },
        { 3, "mixed" },
        { 4, "atomic" },
        { 5, "atomic" },
        { 6, "walsize" },
        { 7, "walsize" },
        { 100, "mixed" }, // a drop that freed the oldest WAL left a MANIFEST the next open refused
        { 108, "walsize" },
    };

    [Theory]
    [MemberData(nameof(Cases))]
    public void AgreesWithModelPerFamily(int seed, string optionSet) => new Run(seed, optionSet).Go(4000);

    /// <summary>One model run: the database, its families and their models.</summary>
    private sealed class Run
    {
        private readonly int _seed;
        private readonly string _optionSet;
        private readonly Random _rng;
        private readonly FaultInjectionFileSystem _fs = DbTestUtil.NewFs();
        private readonly KvOptions _options;
        private readonly List<ModelFamily> _live = new(); // creation order, default first
        private readonly List<ColumnFamilyHandle> _dead = new(); // dropped, or of an earlier open
        private readonly List<(Snapshot Snap, Dictionary<ModelFamily, SortedDictionary<byte[], byte[]>> State)> _snapshots = new();
        private KvDb _db;
        private int _op;
        private int _explicitFlushes;
        private int _drops;
        private int _recreated;
        private int _crashes;

        public Run(int seed, string optionSet)
        {
            _seed = seed;
            _optionSet = optionSet;
            _rng = new Random(seed);
            _options = new KvOptions
            {
                FileSystem = _fs,
                CreateIfMissing = true,
                WriteBufferSize = 16 << 10,
                Compression = KvCompressionType.Lz4,
                AtomicFlush = optionSet == "atomic",
            };
            if (optionSet == "walsize")
            {
                // Memtables never fill: every flush before the first reopen comes from the WAL limit.
                _options.WriteBufferSize = 4 << 20;
                _options.MaxTotalWalSize = 48 << 10;
            }
            _db = KvDb.Open(DbPath, _options);
            _live.Add(new ModelFamily("default", _options, _db.DefaultColumnFamily));
            for (int i = 0; i < 2; i++)
            {
                Create();
            }
        }

        private string Where => $"seed {_seed} ({_optionSet}) op {_op}";

        private bool WalLimitPhase => _optionSet == "walsize" && _op < 1500;

        public void Go(int operations)
        {
            try
            {
                for (_op = 0; _op < operations; _op++)
                {
                    if (_optionSet == "walsize" && _op == 1500)
                    {
                        // Nothing but the WAL limit switched memtables so far (they never fill): some
                        // live family must hold a table or a memtable waiting for its flush.
                        Assert.Equal(0, _explicitFlushes);
                        int switched = 0;
                        foreach (ModelFamily f in _live)
                        {
                            switched += DbTestUtil.TotalTableFiles(_db, f.Handle) + int.Parse(_db.GetProperty(f.Handle, "rocksdb.num-immutable-mem-table")!, System.Globalization.CultureInfo.InvariantCulture);
                        }
                        Assert.True(switched > 0, $"{Where}: MaxTotalWalSize switched no memtable");
                    }
                    Step(_rng.Next(1000));
                }
                foreach (ModelFamily f in _live)
                {
                    CheckFull(f, "final");
                }
                Reopen();
                foreach (ModelFamily f in _live)
                {
                    CheckFull(f, "after the final reopen");
                }
                Assert.True(_drops > 0 && _recreated > 0 && _crashes > 0, $"seed {_seed}: drops {_drops}, re-creations {_recreated}, crashes {_crashes}");
            }
            finally
            {
                ReleaseSnapshots();
                _db.Dispose();
            }
        }

        private void Step(int dice)
        {
            if (dice < 280)
            {
                ModelFamily f = PickFamily();
                byte[] k = ModelTests.RandomKey(_rng);
                byte[] v = ModelTests.RandomValue(_rng);
                _db.Put(f.Handle, k, v);
                f.Apply(k, v);
            }
            else if (dice < 350)
            {
                ModelFamily f = PickFamily();
                byte[] k = ModelTests.RandomKey(_rng);
                _db.Delete(f.Handle, k);
                f.Apply(k, null);
            }
            else if (dice < 370)
            {
                ModelFamily f = PickFamily();
                if (RandomRange(out byte[] begin, out byte[] end))
                {
                    _db.DeleteRange(f.Handle, begin, end);
                    f.RemoveRange(begin, end);
                }
            }
            else if (dice < 440)
            {
                WriteSpanningBatch();
            }
            else if (dice < 600)
            {
                CheckGet(PickFamily(), null, null);
            }
            else if (dice < 650)
            {
                ModelFamily f = PickFamily();
                ModelIteratorCheck.Run(_db, f.Data, _rng, null, $"{Where} family {f}", ModelTests.RandomKey, 60, ModelTests.Hex, f.Handle);
            }
            else if (dice < 665)
            {
                TakeOrReleaseSnapshot();
            }
            else if (dice < 710)
            {
                ReadThroughSnapshot();
            }
            else if (dice < 725)
            {
                if (!WalLimitPhase)
                {
                    ModelFamily f = PickFamily();
                    _db.Flush(f.Handle);
                    _explicitFlushes++;
                    CheckFull(f, "after its flush");
                }
            }
            else if (dice < 730)
            {
                if (!WalLimitPhase)
                {
                    _db.Flush();
                    _explicitFlushes++;
                }
            }
            else if (dice < 740)
            {
                if (!WalLimitPhase)
                {
                    ModelFamily f = PickFamily();
                    RandomRange(out byte[] begin, out byte[] end);
                    bool whole = _rng.Next(2) == 0;
                    _db.CompactRange(f.Handle, whole ? null : begin, whole ? null : end);
                    _explicitFlushes++; // CompactRange flushes first
                    CheckFull(f, "after its compaction");
                }
            }
            else if (dice < 752)
            {
                if (_live.Count < 5)
                {
                    Create();
                }
            }
            else if (dice < 760)
            {
                if (_live.Count > 1)
                {
                    Drop();
                }
            }
            else if (dice < 775)
            {
                CheckDeadHandle();
            }
            else if (dice < 781)
            {
                if (!WalLimitPhase)
                {
                    Reopen();
                    foreach (ModelFamily f in _live)
                    {
                        CheckFull(f, "after reopen");
                    }
                }
            }
            else if (dice < 786)
            {
                if (!WalLimitPhase)
                {
                    Crash(powerLoss: _rng.Next(2) == 0);
                }
            }
            else
            {
                // Writes dominate the rest, so memtables fill and flush by themselves.
                Step(_rng.Next(440));
            }
        }

        private ModelFamily PickFamily() => _live[_rng.Next(_live.Count)];

        private bool RandomRange(out byte[] begin, out byte[] end)
        {
            begin = ModelTests.RandomKey(_rng);
            end = ModelTests.RandomKey(_rng);
            int c = ByteArrayComparer.Instance.Compare(begin, end);
            if (c > 0)
            {
                (begin, end) = (end, begin);
            }
            return c != 0;
        }

        private void WriteSpanningBatch()
        {
            using var batch = new WriteBatch();
            var pending = new List<(ModelFamily F, byte[] K, byte[]? V, byte[]? End)>();
            int n = _rng.Next(1, 16);
            for (int i = 0; i < n; i++)
            {
                ModelFamily f = PickFamily();
                byte[] k = ModelTests.RandomKey(_rng);
                int r = _rng.Next(10);
                if (r == 0 && RandomRange(out byte[] begin, out byte[] end))
                {
                    batch.DeleteRange(f.Handle, begin, end);
                    pending.Add((f, begin, null, end));
                }
                else if (r < 3)
                {
                    batch.Delete(f.Handle, k);
                    pending.Add((f, k, null, null));
                }
                else
                {
                    byte[] v = ModelTests.RandomValue(_rng);
                    batch.Put(f.Handle, k, v);
                    pending.Add((f, k, v, null));
                }
            }
            _db.Write(batch, _rng.Next(10) == 0 ? s_sync : s_noSync);
            foreach ((ModelFamily f, byte[] k, byte[]? v, byte[]? end) in pending)
            {
                if (end != null)
                {
                    f.RemoveRange(k, end);
                }
                else
                {
                    f.Apply(k, v);
                }
            }
        }

        private void CheckGet(ModelFamily f, Snapshot? snap, SortedDictionary<byte[], byte[]>? state)
        {
            state ??= f.Data;
            byte[] k = ModelTests.RandomKey(_rng);
            state.TryGetValue(k, out byte[]? want);
            var ro = snap == null ? null : new ReadOptions { Snapshot = snap };
            if (_rng.Next(4) == 0)
            {
                var w = new System.Buffers.ArrayBufferWriter<byte>();
                bool found = _db.TryGet(f.Handle, k, w, ro);
                Assert.True(found == (want != null), $"{Where}: TryGet({ModelTests.Hex(k)}) in {f} found={found}, model {ModelTests.Hex(want)}");
                Assert.True(want == null || want.AsSpan().SequenceEqual(w.WrittenSpan), $"{Where}: TryGet({ModelTests.Hex(k)}) in {f} value differs");
            }
            else
            {
                byte[]? got = _db.Get(f.Handle, k, ro);
                Assert.True(ModelTests.Same(want, got), $"{Where}: Get({ModelTests.Hex(k)}) in {f} = {ModelTests.Hex(got)}, model {ModelTests.Hex(want)}{(snap == null ? "" : " (snapshot)")}");
            }
        }

        private void TakeOrReleaseSnapshot()
        {
            if (_snapshots.Count < 4)
            {
                var state = new Dictionary<ModelFamily, SortedDictionary<byte[], byte[]>>();
                foreach (ModelFamily f in _live)
                {
                    state[f] = new SortedDictionary<byte[], byte[]>(f.Data, ByteArrayComparer.Instance);
                }
                _snapshots.Add((_db.GetSnapshot(), state));
            }
            else
            {
                int i = _rng.Next(_snapshots.Count);
                _snapshots[i].Snap.Dispose();
                _snapshots.RemoveAt(i);
            }
        }

        /// <summary>A live family through a held snapshot: what it held then, or nothing if it was created since.</summary>
        private void ReadThroughSnapshot()
        {
            if (_snapshots.Count == 0)
            {
                return;
            }
            (Snapshot snap, Dictionary<ModelFamily, SortedDictionary<byte[], byte[]>> all) = _snapshots[_rng.Next(_snapshots.Count)];
            ModelFamily f = PickFamily();
            if (!all.TryGetValue(f, out SortedDictionary<byte[], byte[]>? state))
            {
                state = new SortedDictionary<byte[], byte[]>(ByteArrayComparer.Instance);
            }
            CheckGet(f, snap, state);
            if (_rng.Next(4) == 0)
            {
                ModelIteratorCheck.Run(_db, state, _rng, snap, $"{Where} family {f} (snapshot)", ModelTests.RandomKey, 60, ModelTests.Hex, f.Handle);
            }
        }

        private void ReleaseSnapshots()
        {
            foreach ((Snapshot s, _) in _snapshots)
            {
                s.Dispose();
            }
            _snapshots.Clear();
        }

        private ColumnFamilyOptions FamilyOptions(int n)
        {
            // Families differ in memtable size (so they flush at different times) and in compression.
            var o = new ColumnFamilyOptions
            {
                WriteBufferSize = _optionSet == "walsize" ? 4 << 20 : (8 << 10) << (n % 3),
                Compression = (n % 3) switch { 0 => KvCompressionType.None, 1 => KvCompressionType.Zstd, _ => KvCompressionType.Snappy },
                BlockSize = n % 2 == 0 ? 512 : 4096,
                Level0FileNumCompactionTrigger = 2 + n % 3,
            };
            return o;
        }

        private void Create()
        {
            var free = new List<string>();
            foreach (string name in s_names)
            {
                if (_live.TrueForAll(f => f.Name != name))
                {
                    free.Add(name);
                }
            }
            string pick = free[_rng.Next(free.Count)];
            ColumnFamilyOptions o = FamilyOptions(_rng.Next(6));
            ColumnFamilyHandle h = _db.CreateColumnFamily(pick, o);
            Assert.Equal(pick, h.Name);
            Assert.False(h.IsDropped);
            if (_dead.Exists(d => d.Name == pick))
            {
                _recreated++;
            }
            var f = new ModelFamily(pick, o, h);
            _live.Add(f);
            CheckFull(f, "after its creation"); // a re-created family starts empty
            Assert.Throws<ArgumentException>(() => _db.CreateColumnFamily(pick, o));
        }

        private void Drop()
        {
            ModelFamily f = _live[1 + _rng.Next(_live.Count - 1)];
            _db.DropColumnFamily(f.Handle);
            Assert.True(f.Handle.IsDropped);
            Assert.Null(_db.GetColumnFamily(f.Name));
            CheckFull(f, "after its drop, before its handle is disposed"); // RocksDB serves it until then
            f.Handle.Dispose();
            _live.Remove(f);
            _dead.Add(f.Handle);
            _drops++;
            CheckDeadHandle();
        }

        /// <summary>A dropped family's disposed handle, or one of an earlier open, refuses reads and writes.</summary>
        private void CheckDeadHandle()
        {
            if (_dead.Count == 0)
            {
                return;
            }
            ColumnFamilyHandle h = _dead[_rng.Next(_dead.Count)];
            byte[] k = ModelTests.RandomKey(_rng);
            switch (_rng.Next(7))
            {
                case 0:
                    Assert.Throws<ArgumentException>(() => _db.Get(h, k));
                    break;
                case 1:
                    Assert.Throws<ArgumentException>(() => _db.Put(h, k, k));
                    break;
                case 2:
                    Assert.Throws<ArgumentException>(() => _db.NewIterator(h));
                    break;
                case 3:
                    Assert.Throws<ArgumentException>(() => _db.Flush(h));
                    break;
                case 4:
                    Assert.Throws<ArgumentException>(() => _db.DeleteRange(h, k, [.. k, 0]));
                    break;
                case 5:
                    Assert.Throws<ArgumentException>(() => _db.DropColumnFamily(h));
                    break;
                default:
                    {
                        if (_live.Exists(f => f.Handle.Id == h.Id))
                        {
                            // A handle of an earlier open of a live family: a batch holds only the
                            // family's id, so (as in RocksDB) it writes to that family; nothing to check.
                            break;
                        }
                        // The whole batch is refused: its write to a live family must not land either.
                        ModelFamily live = PickFamily();
                        using var batch = new WriteBatch();
                        batch.Put(live.Handle, k, [1, 2, 3]);
                        batch.Delete(h, k);
                        Assert.Throws<ArgumentException>(() => _db.Write(batch));
                        live.Data.TryGetValue(k, out byte[]? want);
                        Assert.True(ModelTests.Same(want, _db.Get(live.Handle, k)), $"{Where}: a refused batch wrote to {live}");
                        break;
                    }
            }
        }

        private KvDb OpenWithDescriptors()
        {
            var descriptors = new List<ColumnFamilyDescriptor>();
            foreach (ModelFamily f in _live)
            {
                descriptors.Add(new ColumnFamilyDescriptor(f.Name, f.Options));
            }
            // The order of the descriptors does not matter.
            for (int i = descriptors.Count - 1; i > 0; i--)
            {
                int j = _rng.Next(i + 1);
                (descriptors[i], descriptors[j]) = (descriptors[j], descriptors[i]);
            }
            KvDb db = KvDb.Open(DbPath, _options, DbTestUtil.WithDefault(_options, descriptors));
            var names = new List<string>();
            foreach (ModelFamily f in _live)
            {
                _dead.Add(f.Handle);
                f.Handle = db.GetColumnFamily(f.Name) ?? throw new Xunit.Sdk.XunitException($"{Where}: family {f} missing after reopen");
                names.Add(f.Name);
            }
            Assert.Equal(names, db.ColumnFamilies.Select(h => h.Name));
            IReadOnlyList<string> listed = KvDb.ListColumnFamilies(DbPath, _options);
            Assert.Equal("default", listed[0]);
            Assert.Equal(names.Order(StringComparer.Ordinal), listed.Order(StringComparer.Ordinal));
            return db;
        }

        private void Reopen()
        {
            ReleaseSnapshots();
            _db.Dispose();
            _db = OpenWithDescriptors();
        }

        private void Crash(bool powerLoss)
        {
            if (powerLoss)
            {
                // Everything before a Sync write survives a power loss; the create/drop records are durable when they return.
                ModelFamily f = PickFamily();
                byte[] k = ModelTests.RandomKey(_rng);
                byte[] v = ModelTests.RandomValue(_rng);
                _db.Put(f.Handle, k, v, s_sync);
                f.Apply(k, v);
            }
            ReleaseSnapshots();
            DbTestUtil.Abandon(_fs, _db, powerLoss);
            _crashes++;
            _db = OpenWithDescriptors();
            foreach (ModelFamily f in _live)
            {
                CheckFull(f, powerLoss ? "after a power loss" : "after a process crash");
            }
        }

        /// <summary>Full forward and backward scans of <paramref name="f"/> against its model.</summary>
        private void CheckFull(ModelFamily f, string when)
        {
            string where = $"{Where} family {f} {when}";
            using KvIterator it = _db.NewIterator(f.Handle);
            it.SeekToFirst();
            foreach (KeyValuePair<byte[], byte[]> e in f.Data)
            {
                Assert.True(it.Valid, $"{where}: forward scan ended before {ModelTests.Hex(e.Key)}");
                Assert.True(e.Key.AsSpan().SequenceEqual(it.Key), $"{where}: forward key {ModelTests.Hex(it.Key.ToArray())}, model {ModelTests.Hex(e.Key)}");
                Assert.True(e.Value.AsSpan().SequenceEqual(it.Value), $"{where}: value of {ModelTests.Hex(e.Key)} differs");
                it.Next();
            }
            Assert.False(it.Valid, $"{where}: forward scan has extra entries");
            it.SeekToLast();
            foreach (KeyValuePair<byte[], byte[]> e in f.Data.Reverse())
            {
                Assert.True(it.Valid, $"{where}: backward scan ended before {ModelTests.Hex(e.Key)}");
                Assert.True(e.Key.AsSpan().SequenceEqual(it.Key), $"{where}: backward key {ModelTests.Hex(it.Key.ToArray())}, model {ModelTests.Hex(e.Key)}");
                it.Prev();
            }
            Assert.False(it.Valid, $"{where}: backward scan has extra entries");
        }
    }
}
