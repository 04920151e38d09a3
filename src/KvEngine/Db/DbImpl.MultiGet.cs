using System.Buffers;
using KvEngine.Format;
using KvEngine.Memtable;
using KvEngine.Table;
using KvEngine.Util;
using KvEngine.Versions;

using ValueType = KvEngine.Format.ValueType;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Db;

/// <summary>
/// Batched point lookups (RocksDB's DBImpl::MultiGet) and KeyMayExist. A batch pins one read state
/// and reads at one sequence; its keys are sorted (results still go to the caller's order) and
/// duplicates looked up once. Each key goes through the memtables as Get does; the rest walk the
/// version level by level: on level 0 each file takes the keys its range holds, on deeper levels the
/// sorted keys are grouped by the one file that can hold each, and each group is one
/// <see cref="TableReader.MultiGet"/> (one filter, index and data block read per block, not per key).
/// Range tombstones raise each key's covering sequence per source exactly as Get does; a key whose
/// newest entry is a merge operand is finished by <see cref="MergeLookup"/>, Get's own merge walk.
/// Corruption met by any key's lookup throws <see cref="KvCorruptionException"/> for the whole batch.
/// </summary>
internal sealed partial class DbImpl
{
    public void MultiGet(ColumnFamilyData cfd, ReadOnlySpan<ReadOnlyMemory<byte>> keys, MultiGetResults results, ReadOptions options)
    {
        ThrowIfDisposed();
        results.Reset(keys.Length);
        if (keys.Length == 0)
        {
            return;
        }
        MultiGetContext ctx = MultiGetContext.Rent();
        ReadState state = cfd.AcquireReadState(); // the state, then the sequence (see TryGet)
        KvStatistics? stats = _stats;
        try
        {
            ulong sequence = ReadSequence(options);
            ctx.Prepare(keys);
            LookUpMemTables(cfd, state, ctx, results, sequence, options);
            if (ctx.Pending.Length > 0)
            {
                LookUpTables(cfd, state, ctx, results, sequence, options);
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
            state.Unref();
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
            if (TryGetFromMemTables(state, key, sequence, results.Writer, ref covering, out ValueType type))
            {
                stats?.Record(Ticker.MemtableHit);
                bool found = type == ValueType.Merge
                    ? MergeLookup.TryGet(state, cfd.Tables, cfd.Options.MergeOperator, key, sequence, results.Writer, options.VerifyChecksums, options.FillCache)
                    : CheckType(type);
                results.Complete(ctx.CallerIndex(pos), found, start);
            }
            else
            {
                stats?.Record(Ticker.MemtableMiss);
                ctx.AddPending(pos, covering);
            }
        }
    }

    // Version.TryGet's walk for the pending keys together: level 0 newest file first, then one file per key per level.
    private void LookUpTables(ColumnFamilyData cfd, ReadState state, MultiGetContext ctx, MultiGetResults results, ulong sequence, ReadOptions options)
    {
        Version v = state.Version;
        int[] batch = ctx.Batch;
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
                LookUpFile(cfd, state, ctx, results, cfd.Tables.Get(f, 0), batch.AsSpan(0, n), 0, sequence, options);
                ctx.RemoveDecided();
                if (ctx.Pending.Length == 0)
                {
                    return;
                }
            }
        }
        for (int level = 1; level < Version.NumLevels; level++)
        {
            FileMetaData[] files = v.LevelFiles(level);
            if (files.Length == 0)
            {
                continue;
            }
            int n = 0;
            int file = -1;
            foreach (int pos in ctx.Pending)
            {
                int i = Version.FileForKey(files, ctx.Key(pos));
                if (i < 0)
                {
                    continue;
                }
                if (i != file && n > 0)
                {
                    LookUpFile(cfd, state, ctx, results, cfd.Tables.Get(files[file]), batch.AsSpan(0, n), level, sequence, options);
                    n = 0;
                }
                file = i;
                batch[n++] = pos;
            }
            if (n > 0)
            {
                LookUpFile(cfd, state, ctx, results, cfd.Tables.Get(files[file]), batch.AsSpan(0, n), level, sequence, options);
            }
            ctx.RemoveDecided();
            if (ctx.Pending.Length == 0)
            {
                return;
            }
        }
    }

    // One table's share of the batch, then Version.TryGetInFile's decisions per key: an entry
    // decides (a merge operand through Get's merge walk), and so does a covering tombstone.
    private void LookUpFile(ColumnFamilyData cfd, ReadState state, MultiGetContext ctx, MultiGetResults results, TableReader reader,
        ReadOnlySpan<int> batch, int level, ulong sequence, ReadOptions options)
    {
        var sink = new ValueSink(ctx, results);
        reader.MultiGet(ctx, batch, sequence, options.VerifyChecksums, options.FillCache, ref sink);
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
            _results.Writer.Write(value);
            _results.Complete(_ctx.CallerIndex(pos), found: true, start);
        }
    }

    /// <summary>
    /// RocksDB's KeyMayExist: false only when <paramref name="key"/> certainly has no value at the
    /// read sequence, decided without I/O. The memtables answer first (a value found there is
    /// appended to <paramref name="value"/> and reported by <paramref name="valueFound"/>; a deletion
    /// is a certain absence); then each table that could hold the key, newest first, is asked through
    /// its filter only if the filter is in memory (the reader's, pinned, or in the block cache) and
    /// the table is already open. Any table that cannot prove absence makes the answer true. A range
    /// tombstone covering the key after the newer tables proved absence makes it false, as Get would.
    /// </summary>
    public bool KeyMayExist(ColumnFamilyData cfd, ReadOnlySpan<byte> key, IBufferWriter<byte>? value, ReadOptions options, out bool valueFound)
    {
        ThrowIfDisposed();
        valueFound = false;
        ReadState state = cfd.AcquireReadState();
        try
        {
            ulong sequence = ReadSequence(options);
            ulong covering = 0;
            IBufferWriter<byte> sink = value ?? NullBufferWriter.Instance;
            if (TryGetFromMemTables(state, key, sequence, sink, ref covering, out ValueType memType))
            {
                if (memType == ValueType.Merge)
                {
                    return true; // the operands' base may be in a table: the value needs I/O
                }
                valueFound = CheckType(memType);
                return valueFound;
            }
            int length = key.Length + InternalKeys.TrailerSize;
            byte[] lookup = ArrayPool<byte>.Shared.Rent(length);
            try
            {
                InternalKeys.Encode(lookup.AsSpan(0, length), key, sequence, ValueType.ValueTypeForSeek);
                return TablesMayHold(cfd.Tables, state.Version, key, lookup.AsSpan(0, length), sequence, covering);
            }
            finally
            {
                ArrayPool<byte>.Shared.Return(lookup);
            }
        }
        finally
        {
            state.Unref();
        }
    }

    // KeyMayExist over the tables, in Get's order.
    private static bool TablesMayHold(TableCache tables, Version v, ReadOnlySpan<byte> key, ReadOnlySpan<byte> lookup, ulong sequence, ulong covering)
    {
        foreach (FileMetaData f in v.LevelFiles(0))
        {
            if (FileBounds.Contains(f, key) && FileMayHold(tables, f, key, lookup, sequence, ref covering) is bool decided)
            {
                return decided;
            }
        }
        for (int level = 1; level < Version.NumLevels; level++)
        {
            FileMetaData[] files = v.LevelFiles(level);
            int i = files.Length == 0 ? -1 : Version.FileForKey(files, key);
            if (i >= 0 && FileMayHold(tables, files[i], key, lookup, sequence, ref covering) is bool decided)
            {
                return decided;
            }
        }
        return false;
    }

    // True: the file may hold the key (or cannot tell without I/O); false: a covering tombstone deletes it; null: look further.
    private static bool? FileMayHold(TableCache tables, FileMetaData f, ReadOnlySpan<byte> key, ReadOnlySpan<byte> lookup, ulong sequence, ref ulong covering)
    {
        if (!tables.TryGetOpen(f, out TableReader? reader))
        {
            return true; // opening the table is I/O
        }
        if (reader.RangeTombstones is { } tombstones)
        {
            covering = Math.Max(covering, tombstones.MaxCoveringSequence(key, sequence));
        }
        if (reader.CachedKeyMayMatch(key, lookup, sequence))
        {
            return true;
        }
        return covering > 0 ? false : null;
    }
}
