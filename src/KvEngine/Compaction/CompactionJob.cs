using System.Buffers;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Versions;
using KvEngine.RangeDel;
using KvEngine.Util;

using ValueType = KvEngine.Format.ValueType;
using Version = KvEngine.Versions.Version;

namespace KvEngine.Compaction;

/// <summary>
/// Runs one <see cref="Compaction"/>: merges its input files (a table iterator per level-0 file, a
/// level iterator per sorted level), keeps what <see cref="SnapshotStripeFilter"/> says a reader
/// may still need, and writes the rest into new tables of the output level, cut where
/// <see cref="CompactionOutputCutter"/> says (only between user keys, so a user key never spans two
/// files of a level). Every output is fsynced, then the directory once; the result carries the
/// VersionEdit that deletes the inputs and adds the outputs, for the database to log atomically.
/// When nothing lies below the output level in the compaction's range, values every snapshot sees
/// are written with sequence number 0 (at most one entry per user key qualifies: the stripe filter
/// keeps one entry at or below the earliest snapshot).
/// Range tombstones (<see cref="CompactionRangeDelAggregator"/>): point entries a tombstone of their
/// snapshot stripe covers are dropped; the tombstones are written to every output whose share of
/// the key space they overlap (whole, with the file boundaries clamped to the share), and at the
/// bottom of the tree those every snapshot sees are dropped. An output holding only tombstones is
/// written when no point entry survives.
/// Merge operands are resolved first (<see cref="CompactionMergeInput"/>: full merge on reaching
/// a base or the bottom of the tree, partial merge otherwise, never across a snapshot boundary).
/// Compaction filter (<see cref="KvCompactionFilter"/>, RocksDB's CompactionIterator::InvokeFilterIfNeeded):
/// a value (a merged one included) the stripe filter keeps whose sequence number is above every live snapshot (so the newest
/// of its key, and invisible to snapshots) is offered to the filter. Remove turns it into a deletion
/// with the same sequence number, which hides every older version of the key; the stripe filter has
/// already dropped the older versions of this compaction (same stripe), and the deletion itself is
/// dropped when no snapshot exists and no deeper level may hold the key. ChangeValue writes the
/// filter's bytes instead. A filter's exception fails the job as a <see cref="KvException"/>.
/// On failure or cancellation every output written so far is deleted and the exception propagates.
/// A trivial move never gets here. Not thread-safe; one thread runs a job.
/// </summary>
internal sealed class CompactionJob
{
    private readonly Compaction _c;
    private readonly Version _version;
    private readonly CompactionEnvironment _env;
    private readonly ulong[] _snapshots;
    private readonly CancellationToken _cancel;
    private readonly KvCompactionFilter? _userFilter;
    private readonly KvMergeOperator? _mergeOperator;

    /// <param name="compaction">What to compact.</param>
    /// <param name="inputVersion">A version (kept referenced by the caller) holding the inputs.</param>
    /// <param name="env">Files, tables, output numbers.</param>
    /// <param name="snapshotsAscending">Sequence numbers of the live snapshots, taken now.</param>
    /// <param name="cancel">Stops the job (database closing).</param>
    /// <param name="compactionFilter">The application's filter, or null.</param>
    /// <param name="mergeOperator">Merges operands (see <see cref="CompactionMergeInput"/>), or null.</param>
    public CompactionJob(Compaction compaction, Version inputVersion, CompactionEnvironment env, ulong[] snapshotsAscending,
        CancellationToken cancel, KvCompactionFilter? compactionFilter = null, KvMergeOperator? mergeOperator = null)
    {
        _mergeOperator = mergeOperator;
        _userFilter = compactionFilter;
        _c = compaction;
        _version = inputVersion;
        _env = env;
        _snapshots = snapshotsAscending;
        _cancel = cancel;
    }

    public CompactionJobResult Run()
    {
        var outputs = new List<FileMetaData>();
        var paths = new List<string>();
        CompactionOutputFile? current = null;
        bool ok = false;
        long keysIn = 0;
        long keysOut = 0;
        ulong oldestAncester = OldestAncesterTime();
        bool bottommost = DeeperLevelsProbe.IsBottommost(_version, _c.OutputLevel, _c.SmallestUserKey, _c.LargestUserKey);
        var probe = new DeeperLevelsProbe(_version, _c.OutputLevel);
        var cutter = new CompactionOutputCutter(_c.Grandparents, _c.TargetFileSize, _c.MaxCompactionBytes, _c.DynamicFileSize, bottommost);
        using var filter = new SnapshotStripeFilter(_snapshots);
        var rangeDel = new CompactionRangeDelAggregator(_env.Tables, _c.AllInputs(), _snapshots, bottommost);
        byte[]? outputLower = null; // the current output's share of the key space starts here (null: unbounded)
        using var lastOutputUserKey = new ByteBuffer(64);
        using var zeroedKey = new ByteBuffer(64);
        ulong earliestSnapshot = _snapshots.Length > 0 ? _snapshots[0] : InternalKeys.MaxSequenceNumber;
        bool haveOutputKey = false;
        bool haveSnapshots = _snapshots.Length > 0;
        ulong latestSnapshot = haveSnapshots ? _snapshots[^1] : 0; // a bottom value may have sequence 0: test haveSnapshots
        ArrayBufferWriter<byte>? filterValue = _userFilter != null ? new ArrayBufferWriter<byte>(256) : null;
        using var filteredKey = new ByteBuffer(_userFilter != null ? 64 : 1);
        long droppedByFilter = 0;
        try
        {
            using InternalIterator inputs = OpenInputs();
            using var input = new CompactionMergeInput(inputs, _mergeOperator, filter, rangeDel, probe);
            for (input.SeekToFirst(); input.Valid; input.Next())
            {
                _cancel.ThrowIfCancellationRequested();
                ReadOnlySpan<byte> key = input.Key;
                keysIn++;
                if (!filter.ShouldKeep(key, probe) || (rangeDel.HasTombstones && rangeDel.ShouldDelete(key)))
                {
                    continue;
                }
                ReadOnlySpan<byte> userKey = InternalKeys.UserKey(key);
                ReadOnlySpan<byte> value = input.Value;
                if (filterValue != null && InternalKeys.Type(key) == ValueType.Value && (!haveSnapshots || InternalKeys.Sequence(key) > latestSnapshot))
                {
                    KvCompactionFilterDecision decision = InvokeFilter(userKey, value, filterValue);
                    if (decision == KvCompactionFilterDecision.Remove)
                    {
                        droppedByFilter++;
                        if (!haveSnapshots && probe.KeyNotExistsBeyondOutputLevel(userKey))
                        {
                            continue; // nothing older can exist for a deletion to hide
                        }
                        filteredKey.Clear();
                        filteredKey.Append(userKey);
                        filteredKey.AppendFixed64(InternalKeys.PackTrailer(InternalKeys.Sequence(key), ValueType.Deletion));
                        key = filteredKey.WrittenSpan;
                        userKey = InternalKeys.UserKey(key);
                        value = ReadOnlySpan<byte>.Empty;
                    }
                    else if (decision == KvCompactionFilterDecision.ChangeValue)
                    {
                        value = filterValue.WrittenSpan;
                    }
                }
                if (!haveOutputKey || !userKey.SequenceEqual(lastOutputUserKey.WrittenSpan))
                {
                    if (cutter.ShouldStopBefore(userKey, current != null, current?.EstimatedSize ?? 0))
                    {
                        byte[] upper = userKey.ToArray();
                        AddRangeTombstones(current!, rangeDel.Output, outputLower, upper);
                        outputs.Add(current!.Finish(oldestAncester));
                        current.Dispose();
                        current = null;
                        outputLower = upper;
                    }
                    lastOutputUserKey.Clear();
                    lastOutputUserKey.Append(userKey);
                    haveOutputKey = true;
                }
                current ??= NewOutput(paths);
                if (bottommost && InternalKeys.Sequence(key) <= earliestSnapshot && InternalKeys.Type(key) == ValueType.Value)
                {
                    // Every reader sees this value and nothing older exists below: its sequence
                    // number is no longer needed, and zero compresses better (RocksDB does the same).
                    zeroedKey.Clear();
                    zeroedKey.Append(userKey);
                    zeroedKey.AppendFixed64(InternalKeys.PackTrailer(0, ValueType.Value));
                    key = zeroedKey.WrittenSpan;
                }
                current.Add(key, value);
                keysOut++;
            }
            if (current == null && outputs.Count == 0 && !rangeDel.Output.IsEmpty)
            {
                current = NewOutput(paths); // nothing but tombstones survived
            }
            if (current != null)
            {
                AddRangeTombstones(current, rangeDel.Output, outputLower, upper: null);
                outputs.Add(current.Finish(oldestAncester));
                current.Dispose();
                current = null;
            }
            _env.FileSystem.SyncDirectory(_env.Directory);
            ok = true;
        }
        finally
        {
            current?.Dispose();
            if (!ok)
            {
                foreach (string path in paths)
                {
                    TryDelete(path);
                }
            }
        }

        var edit = new VersionEdit();
        long readStart = 0;
        long readOutput = 0;
        foreach (FileMetaData f in _c.StartInputs)
        {
            edit.DeleteFile(_c.StartLevel, f.Number);
            readStart += (long)f.FileSize;
        }
        foreach (FileMetaData f in _c.OutputInputs)
        {
            edit.DeleteFile(_c.OutputLevel, f.Number);
            readOutput += (long)f.FileSize;
        }
        long written = 0;
        foreach (FileMetaData f in outputs)
        {
            edit.AddFile(_c.OutputLevel, f);
            written += (long)f.FileSize;
        }
        AddCursor(_c, edit);
        return new CompactionJobResult
        {
            Edit = edit,
            Outputs = outputs,
            BytesReadStartLevel = readStart,
            BytesReadOutputLevel = readOutput,
            BytesWritten = written,
            KeysIn = keysIn,
            OutputCuts = cutter.Cuts,
            KeysDropped = keysIn - keysOut,
            KeysDroppedByFilter = droppedByFilter,
        };
    }

    // Calls the application's filter; its exceptions become KvException (a background error).
    private KvCompactionFilterDecision InvokeFilter(ReadOnlySpan<byte> userKey, ReadOnlySpan<byte> value, ArrayBufferWriter<byte> newValue)
    {
        newValue.ResetWrittenCount();
        KvCompactionFilterDecision decision;
        try
        {
            decision = _userFilter!.FilterValue(_c.OutputLevel, userKey, value, newValue);
        }
        catch (Exception e)
        {
            // Even OperationCanceledException: the filter has no token, so it is not a shutdown.
            throw new KvException($"The compaction filter '{_userFilter!.Name}' failed: {e.Message}", e);
        }
        if (decision is not (KvCompactionFilterDecision.Keep or KvCompactionFilterDecision.Remove or KvCompactionFilterDecision.ChangeValue))
        {
            throw new KvException($"The compaction filter '{_userFilter.Name}' returned the unknown decision {(int)decision}.", KvStatusCode.InvalidArgument, KvStatusSubCode.None, null);
        }
        return decision;
    }

    // Writes the output's share of the tombstones and what they may delete below the output level.
    private void AddRangeTombstones(CompactionOutputFile output, FragmentedRangeTombstoneList tombstones, byte[]? lower, byte[]? upper)
    {
        output.AddRangeTombstones(tombstones, lower, upper, out int first, out int last);
        if (last > first)
        {
            output.CompensatedRangeDeletionSize = RangeDeletionCompensation.Estimate(
                _version, _env.Tables, _c.OutputLevel, tombstones, first, last, lower, upper);
        }
    }

    private CompactionOutputFile NewOutput(List<string> paths)
    {
        ulong number = _env.NewOutputFileNumber();
        string path = FileNames.TableFile(_env.Directory, number);
        paths.Add(path);
        return new CompactionOutputFile(number, path, _env.FileSystem, _env.TableOptions, _env.BuildContext, _env.WriteLimit);
    }

    /// <summary>The edit of a trivial move: the single input leaves its level for the output level.</summary>
    public static VersionEdit TrivialMoveEdit(Compaction c)
    {
        var edit = new VersionEdit();
        FileMetaData f = c.StartInputs[0];
        edit.DeleteFile(c.StartLevel, f.Number);
        edit.AddFile(c.OutputLevel, f);
        AddCursor(c, edit);
        return edit;
    }

    /// <summary>The edit of FIFO's deletion compaction: the inputs leave the tree.</summary>
    public static VersionEdit DeletionEdit(Compaction c)
    {
        var edit = new VersionEdit();
        foreach (FileMetaData f in c.StartInputs)
        {
            edit.DeleteFile(c.StartLevel, f.Number);
        }
        return edit;
    }

    private static void AddCursor(Compaction c, VersionEdit edit)
    {
        if (c.CompactCursor != null)
        {
            edit.AddCompactCursor(c.StartLevel, c.CompactCursor);
        }
    }

    private InternalIterator OpenInputs()
    {
        var children = new List<InternalIterator>();
        try
        {
            // Inputs are read with fillCache: false, as RocksDB compacts: their blocks would only
            // evict hot ones, and the files are about to be deleted. Each is read ahead
            // CompactionReadaheadSize bytes at a time (RocksDB's compaction_readahead_size).
            int readahead = _env.TableOptions.CompactionReadaheadSize;
            if (_c.StartLevel == 0)
            {
                foreach (FileMetaData f in _c.StartInputs)
                {
                    children.Add(_env.Tables.Get(f).NewIterator(verifyChecksums: true, fillCache: false, readaheadSize: readahead));
                }
            }
            else
            {
                children.Add(new LevelFiles(_env.Tables, _c.StartInputs, verifyChecksums: true, fillCache: false, readaheadSize: readahead).CreateIterator());
            }
            if (_c.OutputInputs.Length > 0)
            {
                children.Add(new LevelFiles(_env.Tables, _c.OutputInputs, verifyChecksums: true, fillCache: false, readaheadSize: readahead).CreateIterator());
            }
            return MergingIterator.Create(children.ToArray());
        }
        catch
        {
            foreach (InternalIterator it in children)
            {
                it.Dispose();
            }
            throw;
        }
    }

    private ulong OldestAncesterTime()
    {
        ulong oldest = 0;
        foreach (FileMetaData f in _c.AllInputs())
        {
            if (f.OldestAncesterTime != 0 && (oldest == 0 || f.OldestAncesterTime < oldest))
            {
                oldest = f.OldestAncesterTime;
            }
        }
        return oldest;
    }

    private void TryDelete(string path)
    {
        try
        {
            _env.FileSystem.DeleteFile(path);
        }
        catch (IOException)
        {
            // Not in any version: the obsolete-file sweep removes it later.
        }
    }
}
