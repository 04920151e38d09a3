using KvEngine.Db.Background;
using KvEngine.Db.State;
using KvEngine.Versions;

namespace KvEngine.Db;

/// <summary>
/// Column family management: the family table, create and drop (RocksDB's
/// DBImpl::CreateColumnFamily / DropColumnFamily), and resolving a handle.
/// <para>
/// The family table (<see cref="ColumnFamilySet"/>: index = id, null for a dropped or unused id) is
/// replaced, never changed, under _mutex, so writers and readers use it without a lock; a write
/// group keeps the table it was prepared with. A dropped family leaves the table and takes no more
/// writes, flushes or compactions, but keeps serving reads of its last state through its handle
/// (Get, MultiGet, KeyMayExist, iterators: <see cref="ResolveForRead"/>) until the handle is
/// disposed or the database closes, as RocksDB does until the handle is destroyed; iterators that
/// pinned its read state keep it in any case. The family's own references on its immutable
/// memtables are released at the drop (or by its running flush), on its mutable memtable by the
/// next write group's leader, once no group that could still insert into it is in flight
/// (<see cref="Write.MemTableSwitcher.AddDropped"/>); the read state holds its own until it is
/// retired; its files become obsolete once unpinned. Create and drop are serialized by
/// _familyGate, which Close also takes, so neither runs after the database closed.
/// </para>
/// </summary>
internal sealed partial class DbImpl
{
    /// <summary>Creates a family (RocksDB's CreateColumnFamily); its handle is returned.</summary>
    public ColumnFamilyHandle CreateColumnFamily(string name, ColumnFamilyOptions options)
    {
        ThrowIfDisposed();
        ThrowIfReadOnly("CreateColumnFamily");
        ArgumentException.ThrowIfNullOrEmpty(name);
        ArgumentNullException.ThrowIfNull(options);
        ColumnFamilyOptions copy = options.CloneFamily();
        copy.ValidateFamily();
        lock (_familyGate)
        {
            ThrowIfDisposed();
            ColumnFamilyHandle handle = CreateFamilyCore(name, copy).Handle;
            WriteOptionsFile();
            return handle;
        }
    }

    /// <summary>
    /// Drops a family (RocksDB's DropColumnFamily): recorded in the MANIFEST, then its memtables
    /// and files go once nothing reads them. The default family cannot be dropped.
    /// </summary>
    public void DropColumnFamily(ColumnFamilyHandle handle)
    {
        ThrowIfDisposed();
        ThrowIfReadOnly("DropColumnFamily");
        ColumnFamilyData cfd = Resolve(handle);
        if (cfd.Id == ColumnFamilyVersions.DefaultId)
        {
            throw new ArgumentException("The default column family cannot be dropped.", nameof(handle));
        }
        lock (_familyGate)
        {
            ThrowIfDisposed();
            if (cfd.IsDropped)
            {
                throw new ArgumentException($"Column family '{cfd.Name}' was already dropped.", nameof(handle));
            }
            _versions.DropFamily(cfd.Versions);
            using (_mutex.Lock())
            {
                cfd.IsDropped = true;
                _families.Remove(cfd);
                foreach (ImmutableMemTable imm in cfd.Immutable)
                {
                    imm.Flushed.TrySetResult(); // nothing of a dropped family is flushed
                }
                if (!cfd.FlushRunning)
                {
                    cfd.ReleaseDroppedMemory(); // its read state stays for reads through the handle
                }
                _writer.Switcher.AddDropped(cfd);
                _mutex.PulseAll();
            }
            WriteOptionsFile();
        }
        _sweeper.TrySweep(); // the drop is recorded; a failed sweep is retried later
    }

    /// <summary>
    /// Writes a new OPTIONS file with every live family's options (at open, and after a family is
    /// created or dropped, as RocksDB does). Best effort, as RocksDB's default
    /// fail_if_options_file_error=false: a failure is logged.
    /// </summary>
    private void WriteOptionsFile()
    {
        List<ColumnFamilyData> live = _families.Live();
        var families = new List<(string Name, ColumnFamilyOptions Options)>(live.Count);
        foreach (ColumnFamilyData cfd in live)
        {
            families.Add((cfd.Name, cfd.Id == ColumnFamilyVersions.DefaultId ? _options : cfd.Options));
        }
        // With file deletions disabled (a checkpoint or backup copying the OPTIONS file) the
        // older files stay until EnableFileDeletions.
        _sweeper.WriteOptions(deleteObsolete => OptionsFile.OptionsFileStore.TryWrite(_fs, _dir, _options, families,
            _versions.NewFileNumber, _versions.MarkFileNumberUsed, _options.LoggerFactory, deleteObsolete));
    }

    /// <summary>The live family named <paramref name="name"/>, or null.</summary>
    public ColumnFamilyHandle? GetColumnFamily(string name)
    {
        ThrowIfDisposed();
        ArgumentNullException.ThrowIfNull(name);
        foreach (ColumnFamilyData? cfd in _families.ById)
        {
            if (cfd != null && cfd.Name == name)
            {
                return cfd.Handle;
            }
        }
        return null;
    }

    /// <summary>
    /// The engine's family behind <paramref name="handle"/> (the default family for null).
    /// <see cref="ArgumentException"/> for a handle of another database or of a dropped family.
    /// </summary>
    public ColumnFamilyData Resolve(ColumnFamilyHandle? handle) => Resolve(handle, forRead: false);

    /// <summary>
    /// The engine's family behind <paramref name="handle"/> for a read (the default family for
    /// null): unlike <see cref="Resolve(ColumnFamilyHandle?)"/>, a dropped family whose handle is
    /// not yet disposed is returned, and reads see its last state (RocksDB serves them until the
    /// handle is destroyed).
    /// </summary>
    public ColumnFamilyData ResolveForRead(ColumnFamilyHandle? handle) => Resolve(handle, forRead: true);

    private ColumnFamilyData Resolve(ColumnFamilyHandle? handle, bool forRead)
    {
        if (handle == null)
        {
            return _families.Default;
        }
        if (!ReferenceEquals(handle.Owner, this))
        {
            throw new ArgumentException("The column family handle belongs to another database (or an earlier open of this one).", nameof(handle));
        }
        ColumnFamilyData cfd = handle.Data;
        if (forRead ? cfd.ReadsReleased : cfd.IsDropped)
        {
            throw new ArgumentException(forRead
                ? $"Column family '{cfd.Name}' was dropped and its handle disposed."
                : $"Column family '{cfd.Name}' was dropped.", nameof(handle));
        }
        return cfd;
    }

    /// <summary>
    /// The handle of <paramref name="cfd"/> was disposed: a dropped family stops serving reads and
    /// its memtables and tables go once no iterator pins them. Nothing for a live family (its
    /// handle stays valid until the database closes). Nothing after close, which released it all.
    /// </summary>
    internal void ReleaseHandle(ColumnFamilyData cfd)
    {
        lock (_familyGate) // Close takes the gate after marking the instance disposed
        {
            if (IsDisposed)
            {
                return;
            }
            using (_mutex.Lock())
            {
                if (!cfd.IsDropped || cfd.ReadsReleased)
                {
                    return;
                }
                cfd.ReleaseReads();
            }
        }
        _sweeper.TrySweep(); // its tables may have lost their last reader
    }

    /// <summary>Records a new family and adds it to the table. Holds <see cref="_familyGate"/> or runs at open.</summary>
    private ColumnFamilyData CreateFamilyCore(string name, ColumnFamilyOptions options)
    {
        if (_versions.FindFamily(name) != null)
        {
            throw new ArgumentException($"Column family '{name}' already exists.", nameof(name));
        }
        ColumnFamilyData cfd;
        using (_mutex.Lock())
        {
            // Under the mutex: no memtable switch moves the WAL meanwhile, so the family's log
            // number is the WAL its first writes go to.
            ColumnFamilyVersions versions = _versions.CreateFamily(name, _wals.CurrentNumber);
            cfd = NewFamilyData(versions, options);
            _families.Add(cfd);
            cfd.InstallReadState();
        }
        return cfd;
    }
}
