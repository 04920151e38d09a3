using System.Buffers;
using KvEngine.Db.State;
using KvEngine.Table;
using KvEngine.Util;
using KvEngine.Versions;

using ValueType = KvEngine.Format.ValueType;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Db.Read;

/// <summary>
/// Batched point lookups (RocksDB's DBImpl::MultiGet once the SuperVersion is referenced). A batch
/// reads one pinned read state at one sequence; its keys are sorted in a per-thread
/// <see cref="MultiGetContext"/> (results still go to the caller's order) and duplicates looked up
/// once. Each key goes through the memtables as Get does (<see cref="PointReader.TryGetFromMemTables"/>);
/// the rest walk the version level by level: on level 0 each file takes the keys its range holds, on
/// deeper levels the sorted keys are grouped by the one file that can hold each, and each group is
/// one <see cref="TableReader.MultiGet"/> (one filter, index and data block read per block, not per
/// key). Range tombstones raise each key's covering sequence per source exactly as Get does; a key
/// whose newest entry is a merge operand is finished by <see cref="MergeLookup"/>, Get's own merge
/// walk. Corruption met by any key's lookup throws <see cref="KvCorruptionException"/> for the whole batch.
/// Level-0 data blocks read from files in vain are charged to the family's
/// <see cref="Compaction.Level0ReadCharges"/> as Gets charge them (see <see cref="LookUpTables"/>),
/// waking the background threads when that crosses the budget.
/// <para>
/// Invariants: the caller (<see cref="DbImpl"/>) has reset the results, pinned the read state
/// before it took the sequence, and releases the state after the call; the context is rented and
/// returned here, on every path. No lock, no allocation once the context and results have grown
/// (<c>MultiGetAllocationTests</c>): the table's value sink is a struct (<see cref="ValueSink"/>),
/// so <see cref="TableReader.MultiGet"/> is specialized for it, not called through an interface.
/// </para>
/// Thread-safety: immutable after construction (the statistics are thread-safe); any number of
/// threads read through one instance at once, each with its own context.
/// </summary>
internal sealed class MultiGetReader
{
    private readonly KvStatistics? _stats;
    private readonly Action _wakeBackground;

    /// <param name="stats">Statistics to record into, or null.</param>
    /// <param name="wakeBackground">Wakes the background threads: a read-triggered compaction was requested.</param>
    public MultiGetReader(KvStatistics? stats, Action wakeBackground)
    {
        _stats = stats;
        _wakeBackground = wakeBackground;
    }

    /// <summary>Looks <paramref name="keys"/> (not empty) up at <paramref name="sequence"/> in <paramref name="state"/> into <paramref name="results"/>.</summary>
    public void MultiGet(ColumnFamilyData cfd, ReadState state, ulong sequence, ReadOnlySpan<ReadOnlyMemory<byte>> keys, MultiGetResults results, ReadOptions options)
    {
        MultiGetContext ctx = MultiGetContext.Rent();
        KvStatistics? stats = _stats;
        try
        {
            ctx.Prepare(keys);
            LookUpMemTables(cfd, state, ctx, results, sequence, options);
            if (ctx.Pending.Length > 0)
            {
                int level0Misses = LookUpTables(cfd, state, ctx, results, sequence, options);
                if (cfd.Level0Reads.Charge(level0Misses, state.Level0ReadBudget))
                {
                    _wakeBackground(); // a read-triggered compaction of level 0 is due
                }
            }
            int found = 0;
            for (int pos = 0, first = 0; pos < ctx.Count; pos++)
            {
                if (ctx.IsDuplicate(pos))
                {
                    results.CopyResult(ctx.CallerIndex(first), ctx.CallerIndex(pos));
                }
                else
                {
                    first = pos;
                }
                found += results.IsFound(ctx.CallerIndex(pos)) ? 1 : 0;
            }
            if (stats != null)
            {
                stats.Record(Ticker.NumberMultiGetCalls);
                stats.Record(Ticker.NumberMultiGetKeysRead, keys.Length);
                stats.Record(Ticker.NumberMultiGetKeysFound, found);
            }
        }
        finally
        {
            ctx.Return();
        }
    }

    // Get's memtable step per distinct key; undecided keys become pending with their covering sequence.
    private void LookUpMemTables(ColumnFamilyData cfd, ReadState state, MultiGetContext ctx, MultiGetResults results, ulong sequence, ReadOptions options)
    {
        KvStatistics? stats = _stats;
        for (int pos = 0; pos < ctx.Count; pos++)
        {
            if (ctx.IsDuplicate(pos))
            {
                continue;
            }
            ReadOnlySpan<byte> key = ctx.Key(pos);
            int start = results.Begin();
            ulong covering = 0;
            if (PointReader.TryGetFromMemTables(state, key, sequence, results.Writer, ref covering, out ValueType type))
            {
                stats?.Record(Ticker.MemtableHit);
                bool found = type == ValueType.Merge
                    ? MergeLookup.TryGet(state, cfd.Tables, cfd.Options.MergeOperator, key, sequence, results.Writer, options.VerifyChecksums, options.FillCache)
                    : PointReader.CheckType(type);
                results.Complete(ctx.CallerIndex(pos), found, start);
            }
            else
            {
                stats?.Record(Ticker.MemtableMiss);
                ctx.AddPending(pos, covering);
            }
        }
    }

    /// <summary>
    /// Get's walk over the version's files (<see cref="FilePicker"/>'s order and level search) for
    /// the pending keys together: level 0 newest file first, each file taking the keys its range
    /// holds; then on each deeper level the keys grouped by the file <see cref="FilePicker.FirstInLevel"/>
    /// finds for each, and again by <see cref="FilePicker.NextInLevel"/> for keys whose entries may
    /// continue in the level's next file. Returns the level-0 misses to charge, what Get's
    /// <see cref="GetStats.Level0Charge"/> counts per key taken over the batch: a level-0 file's data
    /// blocks read from the file, in the share it did not decide of the keys its filter let through
    /// (a block may serve several keys); when nothing deeper was read (the keys left are in no
    /// table), less the largest one file's charge: the reads of the one file a compaction would
    /// leave (a single key: one).
    /// </summary>
    private int LookUpTables(ColumnFamilyData cfd, ReadState state, MultiGetContext ctx, MultiGetResults results, ulong sequence, ReadOptions options)
    {
        Version v = state.Version;
        int[] batch = ctx.Batch;
        bool[] decided = ctx.Decided;
        bool[] mayMatch = ctx.MayMatch;
        int level0Misses = 0;
        int largestFileMisses = 0;
        foreach (FileMetaData f in v.LevelFiles(0))
        {
            int n = 0;
            foreach (int pos in ctx.Pending)
            {
                if (FileBounds.Contains(f, ctx.Key(pos)))
                {
                    batch[n++] = pos;
                }
            }
            if (n > 0)
            {
                int blocksRead = LookUpFile(cfd, state, ctx, results, cfd.Tables.Get(f, 0), batch.AsSpan(0, n), 0, sequence, options);
                if (blocksRead > 0)
                {
                    // Over the keys the file's filter let through (it ran for this batch: blocks were
                    // read); a key the filter answered read nothing and is charged nothing, as in Get.
                    int candidates = 0;
                    int undecided = 0;
                    foreach (int pos in batch.AsSpan(0, n))
                    {
                        if (mayMatch[pos])
                        {
                            candidates++;
                            undecided += decided[pos] ? 0 : 1;
                        }
                    }
                    int misses = candidates == 0 ? 0 : (int)(((2L * blocksRead * undecided) + candidates) / (2L * candidates)); // rounded
                    level0Misses += misses;
                    largestFileMisses = Math.Max(largestFileMisses, misses);
                }
                ctx.RemoveDecided();
                if (ctx.Pending.Length == 0)
                {
                    return level0Misses;
                }
            }
        }
        int blocksBelowLevel0 = 0;
        int[] fileIndex = ctx.FileIndex;
        for (int level = 1; level < Version.NumLevels; level++)
        {
            FileMetaData[] files = v.LevelFiles(level);
            if (files.Length == 0)
            {
                continue;
            }
            foreach (int pos in ctx.Pending)
            {
                fileIndex[pos] = FilePicker.FirstInLevel(files, ctx.Key(pos));
            }
            bool more = true;
            while (more)
            {
                blocksBelowLevel0 += LookUpLevelFiles(cfd, state, ctx, results, files, level, sequence, options);
                ctx.RemoveDecided();
                if (ctx.Pending.Length == 0)
                {
                    return level0Misses;
                }
                more = false;
                foreach (int pos in ctx.Pending)
                {
                    if (fileIndex[pos] >= 0)
                    {
                        fileIndex[pos] = FilePicker.NextInLevel(files, fileIndex[pos], ctx.Key(pos));
                        more |= fileIndex[pos] >= 0;
                    }
                }
            }
        }
        if (level0Misses > 0 && blocksBelowLevel0 == 0)
        {
            level0Misses -= largestFileMisses; // in no table: one file's search remains after a compaction
        }
        return level0Misses;
    }

    // One round of a sorted level: the pending keys grouped by their file (ctx.FileIndex; sorted keys
    // meet their files in order), one table lookup per group. Returns the data blocks read from files.
    private int LookUpLevelFiles(ColumnFamilyData cfd, ReadState state, MultiGetContext ctx, MultiGetResults results, FileMetaData[] files, int level,
        ulong sequence, ReadOptions options)
    {
        int[] batch = ctx.Batch;
        int[] fileIndex = ctx.FileIndex;
        int blocksRead = 0;
        int n = 0;
        int file = -1;
        foreach (int pos in ctx.Pending)
        {
            int i = fileIndex[pos];
            if (i < 0)
            {
                continue;
            }
            if (i != file && n > 0)
            {
                blocksRead += LookUpFile(cfd, state, ctx, results, cfd.Tables.Get(files[file], level), batch.AsSpan(0, n), level, sequence, options);
                n = 0;
            }
            file = i;
            batch[n++] = pos;
        }
        if (n > 0)
        {
            blocksRead += LookUpFile(cfd, state, ctx, results, cfd.Tables.Get(files[file], level), batch.AsSpan(0, n), level, sequence, options);
        }
        return blocksRead;
    }

    // One table's share of the batch (its tombstones raise each key's covering sequence inside
    // TableReader.MultiGet, as FilePicker.Cover does for Get), then Get's decisions per key: an entry
    // decides (a merge operand through Get's merge walk), and so does a covering tombstone. Returns
    // the data blocks read from the file.
    private int LookUpFile(ColumnFamilyData cfd, ReadState state, MultiGetContext ctx, MultiGetResults results, TableReader reader,
        ReadOnlySpan<int> batch, int level, ulong sequence, ReadOptions options)
    {
        var sink = new ValueSink(ctx, results);
        int blocksRead = reader.MultiGet(ctx, batch, sequence, options.VerifyChecksums, options.FillCache, ref sink);
        KvStatistics? stats = _stats;
        byte[] outcome = ctx.Outcome;
        bool[] decided = ctx.Decided;
        foreach (int pos in batch)
        {
            if (outcome[pos] == MultiGetContext.NotFound)
            {
                decided[pos] = ctx.Covering[pos] > 0; // a range tombstone deleted the key: older sources hold only older entries
                continue;
            }
            decided[pos] = true;
            var type = (ValueType)outcome[pos];
            if (type == ValueType.Merge)
            {
                int start = results.Begin();
                ReadOnlySpan<byte> key = ctx.Key(pos);
                bool found = MergeLookup.TryGet(state, cfd.Tables, cfd.Options.MergeOperator, key, sequence, results.Writer, options.VerifyChecksums, options.FillCache);
                results.Complete(ctx.CallerIndex(pos), found, start);
            }
            stats?.Record(level == 0 ? Ticker.GetHitL0 : level == 1 ? Ticker.GetHitL1 : Ticker.GetHitL2AndUp);
        }
        return blocksRead;
    }

    /// <summary>Writes a table's found Value straight into the results under the key's caller index.</summary>
    private readonly struct ValueSink : IMultiGetValueSink
    {
        private readonly MultiGetContext _ctx;
        private readonly MultiGetResults _results;

        public ValueSink(MultiGetContext ctx, MultiGetResults results)
        {
            _ctx = ctx;
            _results = results;
        }

        public void OnValue(int pos, ReadOnlySpan<byte> value)
        {
            int start = _results.Begin();
            BufferWriterCopy.WriteWhole(_results.Writer, value);
            _results.Complete(_ctx.CallerIndex(pos), found: true, start);
        }
    }
}
