using KvEngine.Compaction;
using KvEngine.Db.Background;
using KvEngine.Db.State;
using KvEngine.Db.Write;
using KvEngine.Diagnostics;
using KvEngine.Versions;

namespace KvEngine.Db.Ingestion;

/// <summary>
/// IngestExternalFile (RocksDB 7.8's DBImpl::IngestExternalFiles for one family): prepare the
/// files outside any lock (<see cref="ExternalSstFileIngestionJob.Prepare"/>: read, copy or link,
/// numbers held in the pending outputs); then stop writes by entering the writer queue as an
/// unbatched writer (<see cref="DbWriter.EnterUnbatched"/>: every earlier group done, later ones
/// wait); flush the family first when its memtables overlap the files; then, under the mutex,
/// pick levels and sequence numbers, write them back into the files, record one MANIFEST edit
/// (with the new last sequence) and install a new read state; then let writes go on.
/// <para>
/// Invariants: no write runs between the sequence choice and the edit (the writer queue is held),
/// and no compaction is picked and no compaction or flush installs between the level choice and
/// the edit (both under the mutex, as in RocksDB: the level choice reads tables and the
/// write-back syncs under it); the files' numbers stay in the pending outputs until they are in
/// the version (or the ingestion failed), so no sweep deletes them.
/// </para>
/// <para>
/// Thread-safety: any number of callers; ingestions are serialized by the writer queue. The
/// mutex guards the version install, the pending outputs and the background error.
/// </para>
/// </summary>
internal sealed class ExternalFileIngester
{
    private readonly JobContext _db;
    private readonly DbMutex _mutex;
    private readonly bool _atomicFlush;
    private readonly DbWriter _writer;
    private readonly FlushRunner _flusher;
    private readonly BackgroundScheduler _scheduler;

    public ExternalFileIngester(JobContext db, bool atomicFlush, DbWriter writer, FlushRunner flusher, BackgroundScheduler scheduler)
    {
        _db = db;
        _mutex = db.Mutex;
        _atomicFlush = atomicFlush;
        _writer = writer;
        _flusher = flusher;
        _scheduler = scheduler;
    }

    /// <summary>Ingests the files at <paramref name="paths"/> into <paramref name="cfd"/> (the caller checked the database is open and writable).</summary>
    public void Ingest(ColumnFamilyData cfd, IReadOnlyList<string> paths, IngestExternalFileOptions options)
    {
        ArgumentNullException.ThrowIfNull(paths);
        ArgumentNullException.ThrowIfNull(options);
        if (paths.Count == 0)
        {
            throw new ArgumentException("No files to ingest.", nameof(paths));
        }
        var fullPaths = new string[paths.Count];
        for (int i = 0; i < paths.Count; i++)
        {
            ArgumentException.ThrowIfNullOrEmpty(paths[i], nameof(paths));
            fullPaths[i] = Path.GetFullPath(paths[i]);
        }
        var job = new ExternalSstFileIngestionJob(_db.Dir, _db.Fs, cfd, options);
        var numbers = new List<ulong>(paths.Count);
        bool succeeded = false;
        long started = System.Diagnostics.Stopwatch.GetTimestamp();
        try
        {
            job.Prepare(fullPaths, () =>
            {
                ulong n = _db.PendingOutputs.NewFileNumber();
                numbers.Add(n);
                return n;
            });
            WriteGroup group = _writer.EnterUnbatched();
            try
            {
                Run(cfd, job, options);
                succeeded = true;
            }
            finally
            {
                _writer.ExitUnbatched(group);
            }
        }
        finally
        {
            if (!succeeded)
            {
                using (_mutex.Lock())
                {
                    foreach (ulong n in numbers)
                    {
                        _db.PendingOutputs.Remove(n);
                    }
                }
            }
            job.Cleanup(succeeded);
        }
        RecordIngestion(cfd, job, System.Diagnostics.Stopwatch.GetElapsedTime(started));
    }

    /// <summary>Writes stopped: the flush if needed, then level and sequence choice, write-back and install.</summary>
    private void Run(ColumnFamilyData cfd, ExternalSstFileIngestionJob job, IngestExternalFileOptions options)
    {
        ThrowIfCannotIngest(cfd);
        bool needsFlush;
        ReadState state = cfd.AcquireReadState();
        try
        {
            needsFlush = job.NeedsFlush(state);
        }
        finally
        {
            state.Unref();
        }
        if (needsFlush)
        {
            if (!options.AllowBlockingFlush)
            {
                throw new InvalidOperationException(
                    $"The external files overlap the memtable of column family '{cfd.Name}' and need a flush, which IngestExternalFileOptions.AllowBlockingFlush forbids.");
            }
            IReadOnlyList<ColumnFamilyData>? families = _atomicFlush ? null : [cfd];
            using (_mutex.Lock())
            {
                _writer.Switcher.MakeRoom(force: true, families); // as a forced flush's leader: switch the memtables
            }
            _flusher.PendingFlushes(families).GetAwaiter().GetResult();
        }
        VersionSet versions = _db.Versions;
        using (_mutex.Lock())
        {
            ThrowIfCannotIngest(cfd);
            ulong last = versions.LastSequence;
            ReadState pinned = cfd.AcquireReadState();
            try
            {
                job.Run(pinned.Version, cfd.Versions.Current, cfd.Picker, _db.Snapshots.Count > 0, last);
            }
            finally
            {
                pinned.Unref();
            }
            if (job.ConsumedSeqnoCount > 0)
            {
                job.Edit.LastSequence = last + (ulong)job.ConsumedSeqnoCount;
            }
            try
            {
                versions.LogAndApply(job.Edit);
            }
            catch (IOException e)
            {
                // The MANIFEST may end in a partial record: stop writes, as a failed flush does.
                _db.Errors.SetBackgroundError(e, BackgroundJobKind.Flush);
                throw;
            }
            _writer.Thread.AdvanceSequences(versions.LastSequence);
            cfd.InstallReadState();
            foreach (IngestedFileInfo f in job.Files)
            {
                _db.PendingOutputs.Remove(f.FileNumber);
            }
            _mutex.PulseAll();
        }
        _scheduler.Wake(); // the new files may call for a compaction
    }

    /// <summary>Refuses an ingestion into a dropped family or a database stopped by a background error.</summary>
    private void ThrowIfCannotIngest(ColumnFamilyData cfd)
    {
        using (_mutex.Lock())
        {
            if (_db.Errors.Error is { } error)
            {
                throw new KvWriteStoppedException("The database refuses writes after a background error: " + error.Message, error);
            }
            if (cfd.IsDropped)
            {
                throw new ArgumentException($"Cannot ingest external files into the dropped column family '{cfd.Name}'.");
            }
        }
    }

    /// <summary>Per-level statistics of the ingested files (RocksDB's UpdateStats: bytes written when copied, moved when linked); the new tables opened in the table cache.</summary>
    private static void RecordIngestion(ColumnFamilyData cfd, ExternalSstFileIngestionJob job, TimeSpan elapsed)
    {
        long micros = (long)elapsed.TotalMicroseconds / Math.Max(1, job.Files.Count);
        foreach (IngestedFileInfo f in job.Files)
        {
            var stats = new LevelCompactionStats { Count = 1, Micros = micros };
            if (f.Copied)
            {
                stats.BytesWritten = (long)f.FileSize;
            }
            else
            {
                stats.BytesMoved = (long)f.FileSize;
            }
            cfd.CompactionStats.AddCompaction(f.PickedLevel, stats);
        }
        foreach ((int level, FileMetaData meta) in job.Edit.NewFiles)
        {
            try
            {
                cfd.Tables.Get(meta, level); // opened now, as a flush's output is, not by the first reader
            }
            catch (Exception e) when (e is IOException or KvException)
            {
                // Left to the first reader, which reports it as it would have anyway.
            }
        }
    }
}
