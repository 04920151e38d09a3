using KvEngine.Compaction;
using KvEngine.Db.Read;
using KvEngine.Db.State;
using KvEngine.Memory;
using KvEngine.Memtable;
using KvEngine.Storage;
using KvEngine.Table;
using KvEngine.Versions;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Db.State;

/// <summary>
/// One column family inside the engine (RocksDB's ColumnFamilyData): its options, table cache,
/// compaction picker and statistics, its mutable and immutable memtables, and the
/// <see cref="ReadState"/> readers pin (RocksDB's SuperVersion). The version set's part of the
/// family (current version, log number) is <see cref="Versions"/>.
/// <para>
/// Thread-safety: <see cref="Mem"/>, <see cref="Immutable"/>, <see cref="FlushRunning"/>,
/// <see cref="RunningFlush"/>, <see cref="ForcedFlushes"/>, <see cref="IsDropped"/> and the picker are guarded by the
/// database mutex; the mutable memtable is written only by write groups (which never overlap a
/// memtable switch); the read state is published through a volatile field and pinned lock-free.
/// Invariants: the immutable list is oldest first and is flushed from its front; a running
/// flush's memtables are in <see cref="RunningFlush"/> until it reports them flushed (they leave
/// the immutable list earlier, when its table is recorded); the read state always holds the
/// current memtables and the family's current version.
/// </para>
/// <para>
/// Closing: <see cref="ReleaseMemory"/> publishes <see cref="ReadState.Closed"/>, so a read that
/// comes after it throws <see cref="ObjectDisposedException"/>, while reads that pinned the state
/// before keep it (and, through the <see cref="NativeLifetime"/> every read state holds, the table
/// readers: <see cref="DisposeTables"/> runs only once the last pinned state is gone).
/// </para>
/// </summary>
internal sealed class ColumnFamilyData
{
    private const int SpareIteratorSlots = 4;

    /// <summary>The memtable a released family's read state shows: empty, and never freed (its owner reference is this field's).</summary>
    private static readonly MemTable s_retiredMemTable = new(4096);

    private readonly DbMutex _mutex; // guards the members whose comment says so
    private ReadState _readState;
    private bool _mutableReleased;
    private readonly ArenaBlockRecycler _blockRecycler; // spare blocks of retired memtables, for the filling one
    private readonly List<MemTable> _flushedButPinned = new(); // see AddFlushedButPinned
    private readonly NativeLifetime? _lifetime; // every read state over the family's memtables holds it

    public ColumnFamilyData(ColumnFamilyVersions versions, ColumnFamilyOptions options, KvBlockCache dbCache, KvStatistics? stats,
        string dir, IFileSystem fs, OpenFileLimiter? limiter, object owner, DbMutex mutex, NativeLifetime? lifetime = null,
        (bool DirectReads, bool DirectWrites, int CompactionReadahead, bool AdviseRandom) io = default, TimeProvider? clock = null)
    {
        Clock = clock ?? TimeProvider.System;
        _mutex = mutex;
        _lifetime = lifetime;
        Versions = versions;
        Handle = new ColumnFamilyHandle(this, owner);
        Options = options;
        TableOptions = BuildTableOptions(options, dbCache, stats) with
        {
            UseDirectReads = io.DirectReads,
            UseDirectWrites = io.DirectWrites,
            CompactionReadaheadSize = io.CompactionReadahead,
            AdviseRandomOnOpen = io.AdviseRandom,
        };
        BottommostTableOptions = options.BottommostCompression is null && options.BottommostCompressionLevel is null
            ? TableOptions
            : TableOptions with
            {
                Compression = (Compression.CompressionType)(byte)(options.BottommostCompression ?? options.Compression),
                CompressionLevel = options.BottommostCompressionLevel ?? options.CompressionLevel,
            };
        CompactionOptions = CompactionOptions.From(options);
        Picker = new CompactionPicker(CompactionOptions, Clock);
        Tables = new TableCache(dir, fs, TableOptions, stats, limiter);
        BuildContext = new TableBuildContext { ColumnFamilyId = versions.Id, ColumnFamilyName = versions.Name };
        bool hugePages = UsesHugePages(options);
        _blockRecycler = new ArenaBlockRecycler(ArenaBlockSize(options.WriteBufferSize, hugePages), hugePages, options.WriteBufferSize);
        Mem = NewMemTable();
        _readState = new ReadState(Mem, Array.Empty<MemTable>(), versions.Current, _lifetime) { Level0ReadBudget = Level0ReadBudget(versions.Current) };
    }

    public uint Id => Versions.Id;

    public string Name => Versions.Name;

    public ColumnFamilyVersions Versions { get; }

    /// <summary>The public handle of the family.</summary>
    public ColumnFamilyHandle Handle { get; }

    /// <summary>The family's options, copied at open or create.</summary>
    public ColumnFamilyOptions Options { get; }

    public TableOptions TableOptions { get; }

    /// <summary>Options for compaction outputs at the bottommost level (<see cref="ColumnFamilyOptions.BottommostCompression"/>); <see cref="TableOptions"/> when unset.</summary>
    public TableOptions BottommostTableOptions { get; }

    public CompactionOptions CompactionOptions { get; }

    /// <summary>The database's clock (<see cref="KvOptions.TimeProvider"/>): file times and TTL ages.</summary>
    public TimeProvider Clock { get; }

    /// <summary>The clock's time in Unix seconds.</summary>
    public ulong NowSeconds => (ulong)Clock.GetUtcNow().ToUnixTimeSeconds();

    public CompactionPicker Picker { get; }

    public CompactionStatistics CompactionStats { get; } = new(Version.NumLevels);

    public TableCache Tables { get; }

    /// <summary>What the family's tables record in their properties (rocksdb.column.family.id and name).</summary>
    public TableBuildContext BuildContext { get; }

    /// <summary>The mutable memtable: replaced by a memtable switch, under the database mutex; write groups read it between switches without it.</summary>
    public MemTable Mem { get; set; }

    /// <summary>Memtables waiting to be flushed, oldest first.</summary>
    public List<ImmutableMemTable> Immutable { get; } = new();

    /// <summary>A flush of this family runs (between <see cref="StartFlush"/> and <see cref="EndFlush"/>).</summary>
    public bool FlushRunning => RunningFlush.Length != 0;

    /// <summary>
    /// The memtables the running flush writes (empty when none runs). A flush removes them from
    /// <see cref="Immutable"/> when it records its table, but reports them flushed only after its
    /// sweep of the files that made obsolete: a Flush caller waits on these too, so it never
    /// returns between the two (with the WAL it freed still on disk).
    /// </summary>
    public ImmutableMemTable[] RunningFlush { get; private set; } = [];

    /// <summary>Marks a flush of <paramref name="memTables"/> (at least one) as running. Under the database mutex.</summary>
    public void StartFlush(ImmutableMemTable[] memTables)
    {
        _mutex.AssertHeld();
        ArgumentOutOfRangeException.ThrowIfZero(memTables.Length);
        RunningFlush = memTables;
    }

    /// <summary>The running flush ended (done or failed). Under the database mutex.</summary>
    public void EndFlush()
    {
        _mutex.AssertHeld();
        RunningFlush = [];
    }

    /// <summary>The oldest immutable memtables that must be flushed now (Flush, close), whatever MinWriteBufferNumberToMerge says.</summary>
    public int ForcedFlushes { get; set; }


    /// <summary>The family was dropped: it takes no more writes, flushes or compactions.</summary>
    public bool IsDropped { get; set; }

    /// <summary>
    /// A dropped family's handle was disposed (or the database closed): its read state is retired
    /// and reads through the handle throw. Until then a dropped family keeps serving reads of its
    /// last state, as RocksDB does until the handle is destroyed. Set by <see cref="ReleaseReads"/>, under the database mutex.
    /// </summary>
    public bool ReadsReleased { get; private set; }

    /// <summary>Unflushed data written with DisableWal lives in this family's memtables.</summary>
    public bool HasUnpersistedWrites { get; set; }

    /// <summary>Level-0 misses of point lookups, toward a read-triggered compaction (see <see cref="Level0ReadCharges"/>).</summary>
    public Level0ReadCharges Level0Reads { get; } = new();

    /// <summary>The read-triggered compaction budget a read state over <paramref name="version"/> carries (none once disabled).</summary>
    private long Level0ReadBudget(Version version) =>
        Level0Reads.IsDisabled ? long.MaxValue : Level0ReadCharges.Budget(version, CompactionOptions);

    /// <summary>Spare iterator trees over the current read state (see DbImpl.NewIterator).</summary>
    public ISpareIterator?[] SpareIterators { get; } = new ISpareIterator?[SpareIteratorSlots];

    /// <summary>RocksDB's min_write_buffer_number_to_merge, sanitized to at most max_write_buffer_number - 1.</summary>
    public int MinImmutableToFlush => Math.Min(Options.MinWriteBufferNumberToMerge, Options.MaxWriteBufferNumber - 1);

    /// <summary>The read state now published (not pinned: use <see cref="AcquireReadState"/> to read through it).</summary>
    public ReadState CurrentReadState => Volatile.Read(ref _readState);

    /// <summary>
    /// A memtable for the family to fill next: it takes its regular blocks from the spares of the
    /// family's retired memtables first (<see cref="ArenaBlockRecycler"/>).
    /// </summary>
    public MemTable NewMemTable() =>
        new(new MemTableOptions(
            ArenaBlockSize: _blockRecycler.BlockSize,
            HashIndexBuckets: MemTableHashIndex.BucketsFor(Options.WriteBufferSize, Options.MemTableHashIndexRatio),
            HugePages: _blockRecycler.HugePages,
            Recycler: _blockRecycler));

    /// <summary>Bytes of spare memtable blocks the family keeps for its filling memtable (diagnostics, tests).</summary>
    public long SpareMemTableBytes => _blockRecycler.SpareBytes;

    /// <summary>Frees the spare memtable blocks once the family stopped writing (see <see cref="ArenaBlockRecycler.TrimIfIdle"/>).</summary>
    public long TrimIdleMemTableSpares(long nowMs, long intervalMs) => _blockRecycler.TrimIfIdle(nowMs, intervalMs);

    /// <summary>Memtable blocks taken from the spares so far (diagnostics, tests).</summary>
    public long ReusedMemTableBlocks => _blockRecycler.ReusedBlocks;

    /// <summary>
    /// Publishes a new read state from the current memtables and version. Holds the database mutex.
    /// Once the version set has dropped the family (its current version is then empty) nothing is
    /// published: the last read state is what reads through the dropped family's handle serve. The
    /// version set marks the drop before it empties the version, so a current version read first
    /// and then a drop not yet seen means the version is still the family's last one.
    /// </summary>
    public void InstallReadState()
    {
        _mutex.AssertHeld();
        Version current = Versions.Current;
        if (Versions.IsDropped || ReferenceEquals(Volatile.Read(ref _readState), ReadState.Closed))
        {
            return; // a flush or compaction ending between the drop's MANIFEST write and IsDropped here; or closed
        }
        var imm = new MemTable[Immutable.Count];
        for (int i = 0; i < imm.Length; i++)
        {
            imm[i] = Immutable[Immutable.Count - 1 - i].Mem;
        }
        var next = new ReadState(Mem, imm, current, _lifetime) { Level0ReadBudget = Level0ReadBudget(current) };
        ReadState old = Interlocked.Exchange(ref _readState, next);
        DropSpareIterators(); // they read the old state
        old.Unref();
    }

    /// <summary>
    /// Pins the current read state; lock-free. Retries only when the state it read was replaced
    /// meanwhile (a newer one was published: some other thread made progress); a state that cannot
    /// be pinned yet is still published is <see cref="ReadState.Closed"/> (the family or database
    /// closed): <see cref="ObjectDisposedException"/>.
    /// </summary>
    public ReadState AcquireReadState()
    {
        while (true)
        {
            ReadState s = Volatile.Read(ref _readState);
            if (s.TryRef())
            {
                return s;
            }
            if (ReferenceEquals(s, Volatile.Read(ref _readState)))
            {
                ThrowClosed();
            }
        }
    }

    [System.Diagnostics.CodeAnalysis.DoesNotReturn]
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private static void ThrowClosed() => throw new ObjectDisposedException(nameof(KvDb));

    /// <summary>
    /// Pins the current read state's table version alone (a compaction's input): unlike a pinned
    /// read state it keeps no memtable alive, so memtables flushed while a long compaction runs are
    /// freed at once (RocksDB's compaction refs its input version, not the SuperVersion). Lock-free;
    /// release with <see cref="Version.Unref"/>.
    /// </summary>
    public Version AcquireVersion()
    {
        ReadState s = AcquireReadState();
        Version v = s.Version;
        v.Ref();
        s.Unref();
        return v;
    }

    /// <summary>
    /// Remembers a memtable already flushed that a reader (an iterator, a read in progress) still
    /// pins: gone from the read state, not yet freed. rocksdb.size-all-mem-tables counts it, as
    /// RocksDB counts its pinned immutable memtables (<see cref="FlushedButPinnedBytes"/>). The list
    /// drops freed ones whenever it is touched, so it holds only what readers pin. Holds the
    /// database mutex.
    /// </summary>
    public void AddFlushedButPinned(MemTable mem)
    {
        _mutex.AssertHeld();
        _flushedButPinned.RemoveAll(static m => m.IsReleased);
        _flushedButPinned.Add(mem);
    }

    /// <summary>Bytes of the flushed memtables readers still pin (see <see cref="AddFlushedButPinned"/>). Holds the database mutex.</summary>
    public long FlushedButPinnedBytes()
    {
        _mutex.AssertHeld();
        _flushedButPinned.RemoveAll(static m => m.IsReleased);
        long sum = 0;
        foreach (MemTable m in _flushedButPinned)
        {
            sum += m.ApproximateMemoryUsage;
        }
        return sum;
    }

    /// <summary>Disposes every spare iterator tree (a new read state was installed, or the family is closing).</summary>
    public void DropSpareIterators()
    {
        for (int i = 0; i < SpareIterators.Length; i++)
        {
            Interlocked.Exchange(ref SpareIterators[i], null)?.Dispose();
        }
    }

    /// <summary>
    /// Releases the family's memtables and read state (closing): publishes
    /// <see cref="ReadState.Closed"/>, so later reads throw; readers that pinned the state keep it
    /// until they are done. Runs at close, once no write can run.
    /// </summary>
    public void ReleaseMemory()
    {
        CloseReads();
        ReleaseImmutable();
    }

    /// <summary>
    /// A dropped family with no flush to come: releases its own references on the immutable
    /// memtables; the read state (which holds its own) stays, so reads through the handle keep
    /// seeing the family's last state, until <see cref="ReleaseReads"/> (the handle is disposed)
    /// or close. Holds the database mutex.
    /// </summary>
    public void ReleaseDroppedMemory()
    {
        _mutex.AssertHeld();
        _blockRecycler.Dispose(); // no memtable of the family fills again: spares go now
        ReleaseImmutable();
        if (ReadsReleased)
        {
            RetireReadState();
        }
    }

    /// <summary>
    /// The handle of a dropped family was disposed: reads through it stop, and the read state is
    /// retired now unless a flush of the family still runs (it releases it when it ends). Holds the
    /// database mutex.
    /// </summary>
    public void ReleaseReads()
    {
        _mutex.AssertHeld();
        ReadsReleased = true;
        if (!FlushRunning)
        {
            RetireReadState();
        }
    }

    private void ReleaseImmutable()
    {
        DropSpareIterators();
        foreach (ImmutableMemTable imm in Immutable)
        {
            imm.Mem.Unref();
        }
        Immutable.Clear();
    }

    private void RetireReadState()
    {
        DropSpareIterators();
        // The family's own memtables leave the read state, so they are freed once the readers that
        // pinned the old state are done (and, for the mutable one, ReleaseMutableMemTable ran).
        ReadState old = Interlocked.Exchange(ref _readState, new ReadState(s_retiredMemTable, Array.Empty<MemTable>(), Version.Empty(null)));
        old.Unref();
    }

    /// <summary>Publishes <see cref="ReadState.Closed"/> and releases the family's reference on the state it replaces. Idempotent.</summary>
    private void CloseReads()
    {
        ReadState old = Interlocked.Exchange(ref _readState, ReadState.Closed);
        if (!ReferenceEquals(old, ReadState.Closed))
        {
            old.Unref();
        }
        DropSpareIterators(); // after the exchange: a spare parked before it is dropped here, one parked after it sees the change
    }

    /// <summary>
    /// A dropped family: drops the family's own reference on its mutable memtable (write groups
    /// no longer reach it; read states that pinned it keep theirs). Holds the database mutex, no
    /// write group inserting. Once only.
    /// </summary>
    public void ReleaseMutableMemTable()
    {
        _mutex.AssertHeld();
        ReleaseMutableMemTableOnce();
    }

    /// <summary>The release itself: by a drop (under the mutex) or at close (nothing else runs).</summary>
    private void ReleaseMutableMemTableOnce()
    {
        if (!_mutableReleased)
        {
            _mutableReleased = true;
            Mem.Unref();
            _blockRecycler.Dispose(); // no memtable of the family fills again
        }
    }

    /// <summary>
    /// Releases the family's own references at close (after <see cref="ReleaseMemory"/> or instead
    /// of it), once no write can run; the memtables are freed when the last reader that pinned
    /// them is done. The table readers stay for those readers: <see cref="DisposeTables"/>.
    /// </summary>
    public void Close()
    {
        CloseReads();
        ReleaseMutableMemTableOnce();
        foreach (ImmutableMemTable imm in Immutable)
        {
            imm.Mem.Unref();
        }
        Immutable.Clear();
    }

    /// <summary>Closes the table readers: once no read state can reach them (the database's <see cref="NativeLifetime"/> was released).</summary>
    public void DisposeTables() => Tables.Dispose();

    /// <summary>
    /// RocksDB's default arena block: an eighth of the write buffer, 4 KiB..1 MiB; with huge pages
    /// one huge page (RocksDB's arena rounds a block up to whole huge pages too).
    /// </summary>
    internal static int ArenaBlockSize(long writeBufferSize, bool hugePages) =>
        hugePages ? PageMemory.HugePageSize : (int)Math.Clamp(writeBufferSize / 8, 4096, 1 << 20) & ~7; // the arena's 8-byte multiple

    /// <summary>
    /// Memtables use huge pages when asked to, the kernel offers them, and a block of one huge page
    /// is at most an eighth of the write buffer (so a memtable still spans several blocks).
    /// </summary>
    internal static bool UsesHugePages(ColumnFamilyOptions options) =>
        options.MemTableHugePages && PageMemory.HugePageSize > 0 && options.WriteBufferSize / 8 >= PageMemory.HugePageSize;

    /// <summary>The table-format settings (<see cref="TableOptions.ForFamily"/>, shared with SstFileWriter) plus the reading side: cache, pinning, statistics.</summary>
    private static TableOptions BuildTableOptions(ColumnFamilyOptions options, KvBlockCache dbCache, KvStatistics? stats) =>
        TableOptions.ForFamily(options, options.Compression, options.CompressionLevel) with
        {
            BlockCache = (options.BlockCache ?? dbCache).Primary,
            CacheIndexAndFilterBlocks = options.CacheIndexAndFilterBlocks,
            PinL0FilterAndIndexBlocksInCache = options.PinL0FilterAndIndexBlocksInCache,
            MaxFileSizeForL0MetaPin = options.WriteBufferSize / 2 * 3, // RocksDB's MaxFileSizeForL0MetaPin
            Statistics = stats,
            PinTopLevelIndexAndFilter = options.PinTopLevelIndexAndFilter,
            TopLevelIndexPinning = (PinningTier)(int)options.MetadataCacheOptions.TopLevelIndexPinning,
            PartitionPinning = (PinningTier)(int)options.MetadataCacheOptions.PartitionPinning,
            UnpartitionedPinning = (PinningTier)(int)options.MetadataCacheOptions.UnpartitionedPinning,
            MergeOperatorName = options.MergeOperator?.Name,
        };
}
