using System.Buffers;
using DotNext.IO;
using DotNext.Net.Cluster.Consensus.Raft.StateMachine;
using KvEngine.Replication.Snapshots;
using KvEngine.Replication.Storage;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace KvEngine.Replication;

/// <summary>
/// A DotNext Raft state machine (<see cref="IStateMachine"/>) backed by a KvEngine database: each
/// committed log entry is a KvEngine <see cref="WriteBatch"/> (its <see cref="WriteBatch.Data"/>),
/// written together with the entry's index and term in one atomic batch, so a restart neither
/// applies an entry twice nor skips one. Snapshots are KvEngine checkpoints; a follower that falls
/// behind the leader's log receives one and swaps its whole database for it.
/// </summary>
/// <remarks>
/// <para>Open it (which restores it) <b>before</b> constructing the <see cref="WriteAheadLog"/> that
/// drives it: the log reads <see cref="ISnapshotManager.Snapshot"/> once, in its constructor, to
/// know where to resume.</para>
/// <para>Invariants: <see cref="AppliedIndex"/> is the index stored in the database (what survives
/// a crash); an entry at or below it is skipped; the current snapshot's index is at most
/// <see cref="AppliedIndex"/>. A batch the database refuses (malformed, or naming a column family
/// it lacks) is skipped on every node alike, its index still recorded.</para>
/// <para>Thread-safety: DotNext calls <see cref="IStateMachine.ApplyAsync"/> one entry at a time;
/// <see cref="ISnapshotManager.Snapshot"/> and <see cref="ISnapshotManager.ReclaimGarbageAsync"/>
/// may run beside it. Reads through <see cref="Read{TState, TResult}"/> may run on any thread at
/// any time; they are held off only while an installed snapshot replaces the database.</para>
/// </remarks>
public sealed partial class KvStateMachine : IStateMachine, IDisposable
{
    private readonly NodeDirectory _layout;
    private readonly SnapshotStore _snapshots;
    private readonly KvStateMachineOptions _options;
    private readonly WriteOptions _writeOptions;
    private readonly ILogger _logger;
    private readonly ReaderWriterLockSlim _swapLock = new(LockRecursionPolicy.NoRecursion);
    private KvDb _db;
    private ColumnFamilyHandle _raftFamily;
    private long _appliedIndex;
    private long _appliedTerm;
    private bool _disposed;

    private KvStateMachine(string directory, KvStateMachineOptions options)
    {
        _options = options;
        if (options.SnapshotInterval < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(options), options.SnapshotInterval, "KvStateMachineOptions.SnapshotInterval must be at least 1.");
        }
        _logger = options.LoggerFactory?.CreateLogger<KvStateMachine>() ?? NullLogger<KvStateMachine>.Instance;
        _writeOptions = new WriteOptions { Sync = options.SyncWrites };
        _layout = new NodeDirectory(directory);
        _snapshots = new SnapshotStore(_layout.SnapshotsPath);
        (_db, _raftFamily) = OpenDatabase(_layout.DatabasePath);
        AppliedState applied = ReadAppliedState(_db, _raftFamily);
        if (_snapshots.Current is { } snapshot && snapshot.Index > applied.Index)
        {
            // The database lost a tail its snapshot has (an unsynced WAL after a machine crash): the
            // Raft log resumes after the snapshot, so the database must resume there too.
            LogRestoringFromSnapshot(_logger, applied.Index, snapshot.Index);
            _db.Dispose();
            string next = _layout.CopyFromCheckpoint(snapshot.Directory);
            (_db, _raftFamily) = OpenDatabase(next);
            _layout.SwitchToNext();
            applied = ReadAppliedState(_db, _raftFamily);
        }
        _appliedIndex = applied.Index;
        _appliedTerm = applied.Term;
    }

    /// <summary>
    /// Opens (creating when missing) the replicated database in <paramref name="directory"/> and
    /// restores it: the live database, its applied index and the newest snapshot.
    /// </summary>
    /// <param name="directory">The node's state directory (the database and its snapshots).</param>
    /// <param name="options">Configuration; null for the defaults.</param>
    /// <exception cref="KvCorruptionException">The directory's layout or applied state is damaged.</exception>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of range.</exception>
    public static KvStateMachine Open(string directory, KvStateMachineOptions? options = null)
    {
        ArgumentException.ThrowIfNullOrEmpty(directory);
        return new KvStateMachine(directory, options ?? new KvStateMachineOptions());
    }

    /// <summary>The index of the last entry the database holds (0 before the first).</summary>
    public long AppliedIndex => Volatile.Read(ref _appliedIndex);

    /// <summary>The term of the entry at <see cref="AppliedIndex"/>.</summary>
    public long AppliedTerm => Volatile.Read(ref _appliedTerm);

    /// <summary>The index the newest snapshot covers (0 before the first).</summary>
    public long SnapshotIndex => _snapshots.Current?.Index ?? 0;

    /// <summary>The directory of the live database (changes when a snapshot is installed).</summary>
    public string DatabasePath => _layout.DatabasePath;

    ISnapshot? ISnapshotManager.Snapshot => _snapshots.Current;

    /// <summary>
    /// Runs <paramref name="read"/> against the live database, which no installed snapshot can
    /// close meanwhile. Do not keep the database (or iterators over it) after it returns.
    /// </summary>
    /// <param name="state">Passed to <paramref name="read"/> (avoid a closure).</param>
    /// <param name="read">The read.</param>
    /// <returns>What <paramref name="read"/> returns.</returns>
    public TResult Read<TState, TResult>(TState state, Func<KvDb, TState, TResult> read)
    {
        ArgumentNullException.ThrowIfNull(read);
        _swapLock.EnterReadLock();
        try
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            return read(_db, state);
        }
        finally
        {
            _swapLock.ExitReadLock();
        }
    }

    /// <summary>
    /// SHA-256 (hex) of the replicated contents as they are now: every key and value of the default
    /// family and of <see cref="KvStateMachineOptions.ColumnFamilies"/>, in order, each as
    /// length (LE32) then bytes, families in that order; the applied state is left out. Nodes that
    /// applied the same index have the same digest: compare them to check replicas agree.
    /// </summary>
    public string ComputeDigest() => Read(this, static (db, machine) =>
    {
        using var hash = System.Security.Cryptography.IncrementalHash.CreateHash(System.Security.Cryptography.HashAlgorithmName.SHA256);
        Span<byte> length = stackalloc byte[4];
        var families = new List<ColumnFamilyHandle> { db.DefaultColumnFamily };
        foreach (ColumnFamilyDescriptor descriptor in machine._options.ColumnFamilies ?? [])
        {
            families.Add(db.GetColumnFamily(descriptor.Name) ?? throw new KvException($"Column family '{descriptor.Name}' is missing.", KvStatusCode.InvalidArgument, KvStatusSubCode.None, null));
        }
        foreach (ColumnFamilyHandle family in families)
        {
            using KvIterator it = db.NewIterator(family);
            for (it.SeekToFirst(); it.Valid; it.Next())
            {
                System.Buffers.Binary.BinaryPrimitives.WriteInt32LittleEndian(length, it.Key.Length);
                hash.AppendData(length);
                hash.AppendData(it.Key);
                System.Buffers.Binary.BinaryPrimitives.WriteInt32LittleEndian(length, it.Value.Length);
                hash.AppendData(length);
                hash.AppendData(it.Value);
            }
        }
        return Convert.ToHexString(hash.GetHashAndReset());
    });

    /// <inheritdoc/>
    ValueTask<long> IStateMachine.ApplyAsync(LogEntry entry, CancellationToken token)
    {
        if (entry.Index <= AppliedIndex)
        {
            return ValueTask.FromResult(entry.Index);
        }
        if (entry.IsSnapshot)
        {
            return InstallSnapshotAsync(entry, token);
        }
        try
        {
            token.ThrowIfCancellationRequested();
            Apply(entry);
            return ValueTask.FromResult(entry.Index);
        }
        catch (Exception e)
        {
            return ValueTask.FromException<long>(e);
        }
    }

    /// <inheritdoc/>
    ValueTask ISnapshotManager.ReclaimGarbageAsync(long watermark, CancellationToken token)
    {
        try
        {
            int deleted = _snapshots.DeleteOlderThan(watermark, token);
            if (deleted > 0)
            {
                LogSnapshotsDeleted(_logger, deleted, watermark);
            }
            return ValueTask.CompletedTask;
        }
        catch (Exception e)
        {
            return ValueTask.FromException(e);
        }
    }

    private void Apply(in LogEntry entry)
    {
        Exception? refusal = null;
        WriteBatch? batch = null;
        try
        {
            if (!entry.IsConfiguration && entry.TryGetPayload(out ReadOnlySequence<byte> payload) && !payload.IsEmpty)
            {
                batch = Decode(payload, out refusal);
            }
            batch ??= new WriteBatch();
            AddAppliedState(batch, entry.Index, entry.Term);
            try
            {
                _db.Write(batch, _writeOptions);
            }
            catch (Exception e) when (e is ArgumentException or InvalidOperationException)
            {
                // Refused before the database's WAL (a column family it lacks, a merge without an
                // operator): deterministic, so every node skips the entry alike.
                refusal = e;
                batch.Clear();
                AddAppliedState(batch, entry.Index, entry.Term);
                _db.Write(batch, _writeOptions);
            }
        }
        finally
        {
            batch?.Dispose();
        }
        if (refusal != null)
        {
            LogEntryRefused(_logger, refusal, entry.Index);
            if (entry.Context is ApplyOutcome outcome)
            {
                outcome.Error = refusal;
            }
        }
        Volatile.Write(ref _appliedTerm, entry.Term);
        Volatile.Write(ref _appliedIndex, entry.Index);
        if (entry.Index - SnapshotIndex >= _options.SnapshotInterval)
        {
            TakeSnapshot(entry.Index, entry.Term);
        }
    }

    private static WriteBatch? Decode(in ReadOnlySequence<byte> payload, out Exception? refusal)
    {
        refusal = null;
        byte[]? rented = null;
        try
        {
            ReadOnlySpan<byte> data;
            if (payload.IsSingleSegment)
            {
                data = payload.FirstSpan;
            }
            else
            {
                rented = ArrayPool<byte>.Shared.Rent(checked((int)payload.Length));
                payload.CopyTo(rented);
                data = rented.AsSpan(0, (int)payload.Length);
            }
            return WriteBatch.FromData(data);
        }
        catch (KvException e)
        {
            refusal = e;
            return null;
        }
        finally
        {
            if (rented != null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
        }
    }

    private void AddAppliedState(WriteBatch batch, long index, long term)
    {
        Span<byte> value = stackalloc byte[AppliedState.EncodedLength];
        new AppliedState(index, term).Encode(value);
        batch.Put(_raftFamily, AppliedState.Key, value);
    }

    /// <summary>Takes a checkpoint of the database as of <paramref name="index"/> and makes it the current snapshot.</summary>
    private void TakeSnapshot(long index, long term)
    {
        string path = _snapshots.PathOf(index, term);
        if (!Directory.Exists(path))
        {
            _db.CreateCheckpoint(path);
        }
        _snapshots.Publish(path, index, term);
        LogSnapshotTaken(_logger, index, term);
    }

    private async ValueTask<long> InstallSnapshotAsync(LogEntry entry, CancellationToken token)
    {
        long index = entry.Index;
        long term = entry.Term;
        string archive = _snapshots.TempPath("incoming-" + CheckpointSnapshot.DirectoryName(index, term));
        try
        {
            var file = new FileStream(archive, FileMode.Create, FileAccess.Write, FileShare.None, 1, useAsync: false);
            await using (file.ConfigureAwait(false))
            {
                await entry.WriteToAsync(IAsyncBinaryWriter.Create(file, new byte[64 * 1024]), token).ConfigureAwait(false);
                file.Flush(flushToDisk: true);
            }
            string next = _layout.CreateNext();
            (long archiveIndex, long archiveTerm) = await SnapshotArchive.ExtractAsync(archive, next, token).ConfigureAwait(false);
            if (archiveIndex != index || archiveTerm != term)
            {
                throw new KvCorruptionException(
                    $"The snapshot received for index {index} term {term} is an archive of index {archiveIndex} term {archiveTerm}.");
            }
            (KvDb db, ColumnFamilyHandle raftFamily) = OpenDatabase(next);
            try
            {
                AppliedState applied = ReadAppliedState(db, raftFamily);
                if (applied.Index != index)
                {
                    throw new KvCorruptionException($"The snapshot of index {index} holds a database that applied index {applied.Index}.");
                }
                string snapshotPath = _snapshots.PathOf(index, term);
                if (!Directory.Exists(snapshotPath))
                {
                    db.CreateCheckpoint(snapshotPath);
                }
                SwapDatabase(db, raftFamily);
            }
            catch
            {
                db.Dispose();
                throw;
            }
            _snapshots.Publish(_snapshots.PathOf(index, term), index, term);
            Volatile.Write(ref _appliedTerm, term);
            Volatile.Write(ref _appliedIndex, index);
            LogSnapshotInstalled(_logger, index, term);
            return index;
        }
        finally
        {
            File.Delete(archive);
        }
    }

    /// <summary>Makes the database open in the next generation directory the live one.</summary>
    private void SwapDatabase(KvDb db, ColumnFamilyHandle raftFamily)
    {
        KvDb previous;
        _swapLock.EnterWriteLock();
        try
        {
            previous = _db;
            _db = db;
            _raftFamily = raftFamily;
        }
        finally
        {
            _swapLock.ExitWriteLock();
        }
        previous.Dispose();
        _layout.SwitchToNext();
    }

    private (KvDb Db, ColumnFamilyHandle RaftFamily) OpenDatabase(string path)
    {
        KvOptions options = _options.DatabaseOptions ?? new KvOptions();
        options.CreateIfMissing = true;
        options.CreateMissingColumnFamilies = true;
        var families = new List<ColumnFamilyDescriptor>
        {
            new("default", options),
            new(AppliedState.ColumnFamilyName),
        };
        if (_options.ColumnFamilies is { } extra)
        {
            families.AddRange(extra);
        }
        KvDb db = KvDb.Open(path, options, families);
        ColumnFamilyHandle? raft = db.GetColumnFamily(AppliedState.ColumnFamilyName);
        if (raft is null)
        {
            db.Dispose();
            throw new KvCorruptionException($"The database in '{path}' has no '{AppliedState.ColumnFamilyName}' column family.");
        }
        return (db, raft);
    }

    private static AppliedState ReadAppliedState(KvDb db, ColumnFamilyHandle raftFamily) =>
        db.Get(raftFamily, AppliedState.Key) is { } value ? AppliedState.Decode(value) : default;

    /// <summary>Closes the database. Stop the Raft node (and dispose its log) first.</summary>
    public void Dispose()
    {
        _swapLock.EnterWriteLock();
        try
        {
            if (_disposed)
            {
                return;
            }
            _disposed = true;
            _db.Dispose();
        }
        finally
        {
            _swapLock.ExitWriteLock();
        }
    }

    [LoggerMessage(EventId = 1, Level = LogLevel.Warning, Message = "Raft entry {Index} is not a write batch the database accepts; skipped on every node")]
    private static partial void LogEntryRefused(ILogger logger, Exception error, long index);

    [LoggerMessage(EventId = 2, Level = LogLevel.Information, Message = "Snapshot taken at index {Index}, term {Term}")]
    private static partial void LogSnapshotTaken(ILogger logger, long index, long term);

    [LoggerMessage(EventId = 3, Level = LogLevel.Information, Message = "Snapshot of index {Index}, term {Term} installed: the database was replaced")]
    private static partial void LogSnapshotInstalled(ILogger logger, long index, long term);

    [LoggerMessage(EventId = 4, Level = LogLevel.Debug, Message = "{Count} snapshots older than index {Watermark} deleted")]
    private static partial void LogSnapshotsDeleted(ILogger logger, int count, long watermark);

    [LoggerMessage(EventId = 5, Level = LogLevel.Warning, Message = "The database applied index {Applied} is behind its snapshot {Snapshot}: restoring the snapshot")]
    private static partial void LogRestoringFromSnapshot(ILogger logger, long applied, long snapshot);
}
