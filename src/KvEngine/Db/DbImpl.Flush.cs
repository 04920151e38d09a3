using KvEngine.Compaction;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Manifest;
using KvEngine.Memtable;
using KvEngine.RangeDel;
using KvEngine.Storage;
using KvEngine.Table;

using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Db;

/// <summary>Flushing memtables into level-0 tables and deleting obsolete files.</summary>
internal sealed partial class DbImpl
{
    public void Flush()
    {
        ThrowIfDisposed();
        FlushCore(wait: true);
    }

    /// <summary>Switches the memtable (serialized with writes) and, when asked, waits for its flush.</summary>
    private void FlushCore(bool wait)
    {
        WriteSync(batch: null, sync: false, disableWal: false, force: true);
        Task pending = PendingFlushes();
        if (wait)
        {
            pending.GetAwaiter().GetResult();
        }
    }

    public async ValueTask FlushAsync(CancellationToken cancellationToken)
    {
        ThrowIfDisposed();
        cancellationToken.ThrowIfCancellationRequested();
        FlushCore(wait: false);
        await PendingFlushes().WaitAsync(cancellationToken).ConfigureAwait(false);
    }

    private Task PendingFlushes()
    {
        lock (_mutex)
        {
            if (_immutable.Count == 0)
            {
                return _backgroundError != null ? Task.FromException(Wrap(_backgroundError)) : Task.CompletedTask;
            }
            var tasks = new Task[_immutable.Count];
            for (int i = 0; i < tasks.Length; i++)
            {
                tasks[i] = _immutable[i].Flushed.Task;
            }
            return Task.WhenAll(tasks);
        }
    }

    /// <summary>
    /// Opens a new level-0 table in the table cache before any reader meets it (as RocksDB's
    /// BuildTable opens its output through the table cache), so that the reads after a flush do not
    /// pay for (and allocate) the open. Best effort: a failure is left to the first reader, which
    /// reports it as it would have anyway.
    /// </summary>
    private void PreOpenTable(FileMetaData meta)
    {
        try
        {
            _tables.Get(meta, 0);
        }
        catch (Exception e) when (e is IOException or KvException)
        {
        }
    }

    /// <summary>
    /// Writes the oldest waiting memtables (<paramref name="jobs"/>, oldest first, the front of the
    /// list) into one level-0 table and records it with the log number of the newest of them.
    /// </summary>
    private void FlushImmutable(ImmutableMemTable[] jobs)
    {
        var edit = new VersionEdit();
        long started = System.Diagnostics.Stopwatch.GetTimestamp();
        var mems = new MemTable[jobs.Length];
        long memBytes = 0;
        for (int i = 0; i < jobs.Length; i++)
        {
            mems[i] = jobs[i].Mem;
            memBytes += mems[i].ApproximateMemoryUsage;
        }
        long jobId = _telemetry.NextJobId();
        _telemetry.FlushStarted(jobId, jobs.Length, memBytes);
        FileMetaData? meta = BuildTable(mems);
        try
        {
            if (meta != null && FlushTombstones(mems) is { IsEmpty: false } tombstones)
            {
                ReadState pinned = AcquireReadState();
                try
                {
                    meta.CompensatedRangeDeletionSize = RangeDeletionCompensation.Estimate(
                        pinned.Version, _tables, 0, tombstones, 0, tombstones.Count, null, null);
                }
                finally
                {
                    pinned.Unref();
                }
            }
            if (meta != null)
            {
                edit.AddFile(0, meta);
            }
            edit.LogNumber = jobs[^1].NextLogNumber;
            _versions.LogAndApply(edit);
            if (meta != null)
            {
                PreOpenTable(meta);
            }
        }
        finally
        {
            if (meta != null)
            {
                lock (_mutex)
                {
                    _pendingOutputs.Remove(meta.Number);
                }
            }
        }
        lock (_mutex)
        {
            _immutable.RemoveRange(0, jobs.Length);
            _forcedFlushes = Math.Max(0, _forcedFlushes - jobs.Length);
            InstallReadState();
            if (_immutable.Count == 0)
            {
                _hasUnpersistedWrites = false;
            }
            Monitor.PulseAll(_mutex);
        }
        foreach (ImmutableMemTable job in jobs)
        {
            job.Mem.Unref();
        }
        // Counted before the flush is reported done, so a caller of Flush sees its bytes.
        long bytes = meta == null ? 0 : (long)meta.FileSize;
        TimeSpan elapsed = System.Diagnostics.Stopwatch.GetElapsedTime(started);
        _compactionStats.AddFlush(bytes, (long)elapsed.TotalMicroseconds);
        _counters.AddFlush(bytes);
        _telemetry.FlushFinished(jobId, jobs.Length, meta?.Number ?? 0, bytes, elapsed);
        foreach (ImmutableMemTable job in jobs)
        {
            job.Flushed.TrySetResult();
        }
        DeleteObsoleteFiles(atOpen: false);
    }

    /// <summary>Writes one memtable to a new level-0 table (recovery); see the overload.</summary>
    private FileMetaData? BuildTable(MemTable mem) => BuildTable([mem]);

    /// <summary>
    /// Writes <paramref name="mems"/> (one memtable, or several merged) to a new table, synced with
    /// its directory entry: the point entries a reader can still see (as RocksDB's flush runs its
    /// compaction iterator: per user key the newest version of each snapshot stripe,
    /// <see cref="SnapshotStripeFilter"/>, less those a newer tombstone of their stripe covers; a
    /// deletion newest in its stripe is never dropped), then the range tombstones, fragmented
    /// (every sequence of each fragment, so every snapshot sees what it saw), in the range_del
    /// block. The file's boundaries cover what was written: smallest = min(smallest point kept,
    /// first start@seq), largest = max(largest point kept, the sentinel of the last end) (RocksDB's
    /// UpdateBoundariesForRange).
    /// Returns its metadata, or null for an empty memtable. The file number stays in the pending
    /// outputs (protected from deletion) until the caller removes it.
    /// </summary>
    private FileMetaData? BuildTable(MemTable[] mems)
    {
        if (Array.TrueForAll(mems, static m => m.IsEmpty))
        {
            return null;
        }
        ulong number = NewPendingOutput();
        string path = FileNames.TableFile(_dir, number);
        bool ok = false;
        try
        {
            byte[]? smallest = null;
            byte[]? largest = null;
            ulong smallestSeq = ulong.MaxValue;
            ulong largestSeq = 0;
            long fileSize;
            // The snapshots to respect are those live now. One taken later cannot need a version
            // this flush drops: the memtables became immutable at a switch made by a write-group
            // leader with no group still inserting (MakeRoomForWrite waits for pipelined inserts),
            // so every entry in them was published, and a later snapshot reads the last published
            // sequence (under the list's lock), which is at or above all of them; for it, as for
            // a plain read, only the newest version of each key matters, and that one is always
            // kept. At recovery no snapshot exists yet.
            ulong[] snapshots = _snapshots.GetSequences();
            FragmentedRangeTombstoneList? tombstones = FlushTombstones(mems);
            using var filter = new SnapshotStripeFilter(snapshots);
            // Points a newer tombstone of their stripe covers go (the tombstones themselves are all
            // written below); never bottommost: level 0 lies on top of everything.
            CompactionRangeDelAggregator? rangeDel = tombstones is { IsEmpty: false }
                ? new CompactionRangeDelAggregator(tombstones, snapshots, bottommost: false)
                : null;
            using (IWritableFile file = _fs.CreateWritable(path))
            {
                using (var builder = new TableBuilder(_tableOptions, file))
                {
                    using (InternalIterator mergedMems = NewFlushIterator(mems))
                    using (var it = new Merge.CompactionMergeInput(mergedMems, _options.MergeOperator, filter, rangeDel, probe: null))
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
            _fs.SyncDirectory(_dir);
            ok = true;
            long now = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
            return new FileMetaData
            {
                Number = number,
                FileSize = (ulong)fileSize,
                Smallest = smallest!,
                Largest = largest!,
                SmallestSeqno = smallestSeq,
                LargestSeqno = largestSeq,
                OldestAncesterTime = (ulong)now,
                FileCreationTime = (ulong)now,
            };
        }
        finally
        {
            if (!ok)
            {
                lock (_mutex)
                {
                    _pendingOutputs.Remove(number);
                }
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

    private static InternalIterator NewFlushIterator(MemTable[] mems)
    {
        var children = new InternalIterator[mems.Length];
        for (int i = 0; i < mems.Length; i++)
        {
            children[i] = mems[i].NewIterator();
        }
        return MergingIterator.Create(children);
    }

    // The memtables' tombstones as one fragmented list (every sequence kept).
    private static FragmentedRangeTombstoneList? FlushTombstones(MemTable[] mems)
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

    /// <summary>
    /// Deletes tables, logs, MANIFESTs and temp files that nothing references. The pending outputs
    /// and the next file number are read before the live versions: an output leaves the pending
    /// set only after its version is installed, and a table numbered at or above the next file
    /// number is being written by a job that started after this look (RocksDB's
    /// min_pending_output rule), so no table in the making is deleted.
    /// </summary>
    private void DeleteObsoleteFiles(bool atOpen)
    {
        HashSet<ulong> live;
        ulong minLog;
        ulong firstUnallocated;
        lock (_mutex)
        {
            live = new HashSet<ulong>(_pendingOutputs);
            firstUnallocated = _versions.NextFileNumberPeek;
            minLog = Math.Min(_versions.LogNumber, _logNumber);
        }
        live.UnionWith(_versions.LiveTableNumbers());
        ulong prevLog = _versions.PrevLogNumber;
        ulong manifest = _versions.ManifestFileNumber;
        foreach (string name in _fs.GetChildren(_dir))
        {
            if (!FileNames.TryParse(name, out DbFileType type, out ulong number))
            {
                continue;
            }
            bool keep = type switch
            {
                DbFileType.Log => number >= minLog || number == prevLog,
                DbFileType.Manifest => number >= manifest,
                DbFileType.Table => live.Contains(number) || number >= firstUnallocated,
                DbFileType.Temp => !atOpen,
                _ => true,
            };
            if (keep)
            {
                continue;
            }
            if (type == DbFileType.Table)
            {
                _tables.Evict(number);
            }
            try
            {
                _fs.DeleteFile(Path.Combine(_dir, name));
            }
            catch (IOException)
            {
                // Retried at the next sweep.
            }
        }
    }
}
