using KvEngine.Compaction;
using KvEngine.Db.State;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Memtable;
using KvEngine.RangeDel;
using KvEngine.RateLimiting;
using KvEngine.Storage;
using KvEngine.Table;
using KvEngine.Versions;

namespace KvEngine.Db.Background;

/// <summary>
/// Writes immutable memtables (one, or several merged) of a column family into a new level-0
/// table (RocksDB's FlushJob with its BuildTable), synced with its directory entry: the point
/// entries a reader can still see (as RocksDB's flush runs its compaction iterator: per user key
/// the newest version of each snapshot stripe, <see cref="SnapshotStripeFilter"/>, less those a
/// newer tombstone of their stripe covers; a deletion newest in its stripe is never dropped), then
/// the range tombstones, fragmented (every sequence of each fragment, so every snapshot sees what
/// it saw), in the range_del block. The file's boundaries cover what was written: smallest =
/// min(smallest point kept, first start@seq), largest = max(largest point kept, the sentinel of
/// the last end) (RocksDB's UpdateBoundariesForRange). Recording the table is the caller's job.
/// <para>
/// One use, on one thread. The output number comes from the database (registered as a pending
/// output); on failure the job deletes its file and releases the number.
/// </para>
/// </summary>
internal sealed class FlushJob
{
    private readonly string _dir;
    private readonly IFileSystem _fs;
    private readonly ColumnFamilyData _family;
    private readonly MemTable[] _mems;
    private readonly ulong[] _snapshots;
    private readonly Func<ulong> _newOutput;
    private readonly Action<ulong> _releaseOutput;
    private readonly BackgroundWriteLimit? _writeLimit;

    /// <param name="dir">The database directory.</param>
    /// <param name="fs">Its file system.</param>
    /// <param name="family">The family the table is for (its table options and properties).</param>
    /// <param name="mems">The memtables, merged into one table.</param>
    /// <param name="snapshots">The sequences of the snapshots to respect, ascending.</param>
    /// <param name="newOutput">A new file number, registered as a pending output.</param>
    /// <param name="releaseOutput">Releases a pending output whose file was not written.</param>
    /// <param name="writeLimit">The rate limiter the table's writes are charged to at high priority (null: none).</param>
    public FlushJob(string dir, IFileSystem fs, ColumnFamilyData family, MemTable[] mems, ulong[] snapshots,
        Func<ulong> newOutput, Action<ulong> releaseOutput, BackgroundWriteLimit? writeLimit = null)
    {
        _writeLimit = writeLimit;
        _dir = dir;
        _fs = fs;
        _family = family;
        _mems = mems;
        _snapshots = snapshots;
        _newOutput = newOutput;
        _releaseOutput = releaseOutput;
    }

    /// <summary>
    /// Writes the table and returns its metadata, or null when the memtables are empty or nothing in
    /// them survives (no table is recorded then). The file
    /// number stays in the pending outputs until the caller removes it.
    /// </summary>
    public FileMetaData? Run()
    {
        MemTable[] mems = _mems;
        ColumnFamilyData cfd = _family;
        if (Array.TrueForAll(mems, static m => m.IsEmpty))
        {
            return null;
        }
        ulong number = _newOutput();
        string path = FileNames.TableFile(_dir, number);
        bool ok = false;
        try
        {
            byte[]? smallest = null;
            byte[]? largest = null;
            ulong smallestSeq = ulong.MaxValue;
            ulong largestSeq = 0;
            ulong now;
            long fileSize;
            ulong[] snapshots = _snapshots;
            FragmentedRangeTombstoneList? tombstones = Tombstones(mems);
            using var filter = new SnapshotStripeFilter(snapshots);
            // Points a newer tombstone of their stripe covers go (the tombstones themselves are all
            // written below); never bottommost: level 0 lies on top of everything.
            CompactionRangeDelAggregator? rangeDel = tombstones is { IsEmpty: false }
                ? new CompactionRangeDelAggregator(tombstones, snapshots, bottommost: false)
                : null;
            using (IWritableFile file = RateLimitedWritableFile.Wrap(_fs.CreateWritable(path, _family.TableOptions.UseDirectWrites), _writeLimit, KvIOPriority.High))
            {
                // RocksDB's flush: creation_time = oldest_ancester_time = file_creation_time = now.
                now = cfd.NowSeconds;
                using (var builder = new TableBuilder(cfd.TableOptions, file, cfd.BuildContext with { CreationTime = now, FileCreationTime = now }))
                {
                    if (mems.Length == 1 && rangeDel == null)
                    {
                        // Its user-key count sizes the filter up front: no hash kept per key (a
                        // 64 MiB memtable's are 3.4 MB). Several memtables may share keys, and range
                        // tombstones may drop most of them, so the count could oversize the filter
                        // many times; those filters collect hashes as compactions' do.
                        builder.ExpectKeys(mems[0].DistinctUserKeys);
                    }
                    using (InternalIterator mergedMems = NewIterator(mems))
                    using (var it = new Compaction.CompactionMergeInput(mergedMems, cfd.Options.MergeOperator, filter, rangeDel, probe: null))
                    {
                        for (it.SeekToFirst(); it.Valid; it.Next())
                        {
                            ReadOnlySpan<byte> key = it.Key;
                            // No deeper-levels probe: a flush never drops a deletion that is the
                            // newest of its stripe, since older data may lie in any level below.
                            if (!filter.ShouldKeep(key, deeper: null) || (rangeDel != null && rangeDel.ShouldDelete(key)))
                            {
                                continue;
                            }
                            ulong seq = InternalKeys.Sequence(key);
                            smallestSeq = Math.Min(smallestSeq, seq);
                            largestSeq = Math.Max(largestSeq, seq);
                            builder.Add(key, it.Value);
                        }
                    }
                    if (builder.NumEntries > 0)
                    {
                        smallest = builder.SmallestKey.ToArray();
                        largest = builder.LargestKey.ToArray();
                    }
                    if (tombstones is { IsEmpty: false })
                    {
                        RangeTombstoneWriter.AddAll(builder, tombstones, out byte[] tSmallest, out byte[] tLargest, out ulong tMinSeq, out ulong tMaxSeq);
                        smallest = smallest == null || InternalKeyComparer.Compare(tSmallest, smallest) < 0 ? tSmallest : smallest;
                        largest = largest == null || InternalKeyComparer.Compare(tLargest, largest) > 0 ? tLargest : largest;
                        smallestSeq = Math.Min(smallestSeq, tMinSeq);
                        largestSeq = Math.Max(largestSeq, tMaxSeq);
                    }
                    builder.Finish();
                    fileSize = builder.FileSize;
                }
                file.Sync();
            }
            if (smallest == null)
            {
                // Every entry went (a SingleDelete met its Put, a tombstone of the same memtables
                // covered the rest) and no range tombstone remains: no table, as RocksDB's
                // BuildTable deletes an empty output. The finally block deletes the file and
                // releases its number; the caller records the flush without a file.
                return null;
            }
            _fs.SyncDirectory(_dir);
            ok = true;
            return new FileMetaData
            {
                Number = number,
                FileSize = (ulong)fileSize,
                Smallest = smallest!,
                Largest = largest!,
                SmallestSeqno = smallestSeq,
                LargestSeqno = largestSeq,
                OldestAncesterTime = now,
                FileCreationTime = now,
            };
        }
        finally
        {
            if (!ok)
            {
                _releaseOutput(number);
                try
                {
                    _fs.DeleteFile(path);
                }
                catch (IOException)
                {
                    // Swept as an obsolete file at the next open.
                }
            }
        }
    }

    private static InternalIterator NewIterator(MemTable[] mems)
    {
        var children = new InternalIterator[mems.Length];
        for (int i = 0; i < mems.Length; i++)
        {
            children[i] = mems[i].NewIterator();
        }
        return MergingIterator.Create(children);
    }

    /// <summary>The memtables' range tombstones as one fragmented list (every sequence kept).</summary>
    public static FragmentedRangeTombstoneList? Tombstones(MemTable[] mems)
    {
        if (mems.Length == 1)
        {
            return mems[0].GetRangeTombstones();
        }
        var fragmenter = new RangeTombstoneFragmenter();
        foreach (MemTable m in mems)
        {
            if (m.GetRangeTombstones() is not { } list)
            {
                continue;
            }
            for (int i = 0; i < list.Count; i++)
            {
                foreach (ulong seq in list.Sequences(i))
                {
                    fragmenter.Add(list.Start(i), list.End(i), seq);
                }
            }
        }
        return fragmenter.Finish();
    }
}
