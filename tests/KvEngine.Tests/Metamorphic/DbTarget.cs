using System.Globalization;
using KvEngine.Storage;

namespace KvEngine.Tests.Metamorphic;

/// <summary>
/// An op log's target: a KvEngine database under one <see cref="MetaConfig"/>, on the in-memory
/// file system or in a temporary directory on disk, with the log's families ("cf1", "cf2", ...,
/// or all in the default family with <see cref="MetaConfig.SingleKeyspace"/>) and its merge
/// operator. Single writes go through the single-key API, batches through one WriteBatch. Not
/// thread-safe; owns the database, the block cache and the directory.
/// </summary>
internal sealed class DbTarget : IMetaTarget
{
    private readonly MetaConfig _config;
    private readonly IFileSystem _fs;
    private readonly DirectoryInfo? _tempDir;
    private readonly string _parent;
    private readonly string _path;
    private readonly KvBlockCache? _cache;
    private readonly KvOptions _options;
    private readonly ColumnFamilyOptions[] _familyOptions;
    private readonly List<ColumnFamilyDescriptor> _descriptors = new();
    private readonly Dictionary<int, Snapshot> _snapshots = new();
    private DbView _view;
    private int _files;

    public DbTarget(MetaLog log, MetaConfig config)
    {
        _config = config;
        Families = log.Families;
        if (config.OnDisk)
        {
            _fs = LocalFileSystem.Instance;
            _tempDir = CreateLocalDirectory();
            _parent = _tempDir.FullName;
        }
        else
        {
            _fs = new FaultInjectionFileSystem();
            _parent = "/meta";
            _fs.CreateDirectory(_parent);
        }
        _path = _parent + "/db";
        _cache = config.Cache?.Invoke();
        KvMergeOperator merge = log.UInt64Add ? UInt64AddOperator.Instance : new StringAppendOperator((byte)',');
        _options = new KvOptions { FileSystem = _fs, CreateIfMissing = true, CreateMissingColumnFamilies = true };
        Configure(_options, merge);
        config.Db?.Invoke(_options);
        _familyOptions = new ColumnFamilyOptions[Families];
        _familyOptions[0] = _options;
        _descriptors.Add(new ColumnFamilyDescriptor("default", _options));
        for (int f = 1; f < Families; f++)
        {
            _familyOptions[f] = config.SingleKeyspace ? _options : Configure(new ColumnFamilyOptions(), merge);
            if (!config.SingleKeyspace)
            {
                _descriptors.Add(new ColumnFamilyDescriptor(FamilyName(f), _familyOptions[f]));
            }
        }
        _view = Open(_path, readOnly: false, onDispose: null);
    }

    public int Families { get; }

    public bool ConfinesPrefixes => _options.PrefixExtractor != null;

    private KvDb Db => _view.Db;

    /// <summary>Table files per level summed over the families, "L0 2, L1 4, L3 9" (the levels that hold any).</summary>
    public string Levels()
    {
        var sb = new System.Text.StringBuilder();
        for (int level = 0; level < 7; level++)
        {
            int files = 0;
            for (int f = 0; f < Families; f++)
            {
                files += int.Parse(Db.GetProperty(_view.Handle(f), "rocksdb.num-files-at-level" + level.ToString(CultureInfo.InvariantCulture))!, CultureInfo.InvariantCulture);
                if (_config.SingleKeyspace)
                {
                    break;
                }
            }
            if (files > 0)
            {
                sb.Append(sb.Length == 0 ? "" : ", ").Append('L').Append(level.ToString(CultureInfo.InvariantCulture)).Append(' ').Append(files.ToString(CultureInfo.InvariantCulture));
            }
        }
        return sb.ToString();
    }

    public static string FamilyName(int family) => family == 0 ? "default" : "cf" + family.ToString(CultureInfo.InvariantCulture);

    public void Write(MetaOp op)
    {
        if (op.Kind != MetaOpKind.Batch)
        {
            if (_config.DropWrite?.Invoke(op) == true)
            {
                return;
            }
            byte[] key = _view.Map(op.Family, MetaValues.Key(op.Key!));
            ColumnFamilyHandle h = _view.Handle(op.Family);
            switch (op.Kind)
            {
                case MetaOpKind.Put:
                    Db.Put(h, key, MetaValues.Value(op.Value!));
                    break;
                case MetaOpKind.Merge:
                    Db.Merge(h, key, MetaValues.Value(op.Value!));
                    break;
                case MetaOpKind.Delete:
                    Db.Delete(h, key);
                    break;
                case MetaOpKind.SingleDelete:
                    Db.SingleDelete(h, key);
                    break;
                case MetaOpKind.DeleteRange:
                    Db.DeleteRange(h, key, _view.Map(op.Family, MetaValues.Key(op.End!)));
                    break;
                default:
                    throw new InvalidOperationException(op.ToString());
            }
            return;
        }
        using var batch = new WriteBatch();
        foreach (MetaOp r in op.Records!)
        {
            if (_config.DropWrite?.Invoke(r) == true)
            {
                continue;
            }
            byte[] key = _view.Map(r.Family, MetaValues.Key(r.Key!));
            ColumnFamilyHandle h = _view.Handle(r.Family);
            switch (r.Kind)
            {
                case MetaOpKind.Put:
                    batch.Put(h, key, MetaValues.Value(r.Value!));
                    break;
                case MetaOpKind.Merge:
                    batch.Merge(h, key, MetaValues.Value(r.Value!));
                    break;
                case MetaOpKind.Delete:
                    batch.Delete(h, key);
                    break;
                case MetaOpKind.SingleDelete:
                    batch.SingleDelete(h, key);
                    break;
                case MetaOpKind.DeleteRange:
                    batch.DeleteRange(h, key, _view.Map(r.Family, MetaValues.Key(r.End!)));
                    break;
                default:
                    throw new InvalidOperationException(r.ToString());
            }
        }
        Db.Write(batch);
    }

    public void Ingest(MetaOp op)
    {
        string file = _parent + "/external-" + (_files++).ToString(CultureInfo.InvariantCulture) + ".sst";
        using (var writer = new SstFileWriter(_familyOptions[op.Family], _fs, SstFileWriter.UnknownColumnFamilyId, ""))
        {
            writer.Open(file);
            // Range deletions first (they cover only what the file is ingested over), then the
            // points, in the key order the generator wrote them in.
            foreach (MetaOp r in op.Records!)
            {
                if (r.Kind == MetaOpKind.DeleteRange)
                {
                    writer.DeleteRange(_view.Map(op.Family, MetaValues.Key(r.Key!)), _view.Map(op.Family, MetaValues.Key(r.End!)));
                }
            }
            foreach (MetaOp r in op.Records)
            {
                byte[] key = _view.Map(op.Family, MetaValues.Key(r.Key!));
                switch (r.Kind)
                {
                    case MetaOpKind.Put:
                        writer.Put(key, MetaValues.Value(r.Value!));
                        break;
                    case MetaOpKind.Merge:
                        writer.Merge(key, MetaValues.Value(r.Value!));
                        break;
                    case MetaOpKind.Delete:
                        writer.Delete(key);
                        break;
                    case MetaOpKind.DeleteRange:
                        break;
                    default:
                        throw new InvalidOperationException(r.ToString());
                }
            }
            writer.Finish();
        }
        Db.IngestExternalFile(_view.Handle(op.Family), [file]);
        _fs.DeleteFile(file);
    }

    public void TakeSnapshot(int id) => _snapshots.Add(id, Db.GetSnapshot());

    public void ReleaseSnapshot(int id)
    {
        if (_snapshots.Remove(id, out Snapshot? s))
        {
            s.Dispose();
        }
    }

    public byte[]? Get(int family, byte[] key, int snapshot) => Db.Get(_view.Handle(family), _view.Map(family, key), _view.ReadOptions(snapshot));

    public byte[]?[] MultiGet(int family, IReadOnlyList<byte[]> keys, int snapshot)
    {
        var mapped = new byte[keys.Count][];
        for (int i = 0; i < keys.Count; i++)
        {
            mapped[i] = _view.Map(family, keys[i]);
        }
        return Db.MultiGet(_view.Handle(family), mapped, _view.ReadOptions(snapshot));
    }

    public IMetaCursor NewCursor(int family, int snapshot, byte[]? lower, byte[]? upper, bool prefixMode) =>
        _view.NewCursor(family, snapshot, lower, upper, prefixMode);

    public void Flush(int family)
    {
        if (family < 0)
        {
            Db.Flush();
        }
        else
        {
            Db.Flush(_view.Handle(family));
        }
    }

    public void Compact(int family, byte[]? begin, byte[]? end) =>
        Db.CompactRange(_view.Handle(family), begin != null ? _view.Map(family, begin) : _view.KeyspacePrefix(family), end != null ? _view.Map(family, end) : _view.KeyspaceEnd(family));

    public void Reopen()
    {
        ReleaseSnapshots();
        Db.Dispose();
        _view = Open(_path, readOnly: false, onDispose: null);
    }

    public IMetaReader Checkpoint()
    {
        string dir = _parent + "/checkpoint-" + (_files++).ToString(CultureInfo.InvariantCulture);
        Db.CreateCheckpoint(dir);
        return Open(dir, readOnly: true, onDispose: _config.OnDisk ? () => Directory.Delete(dir, recursive: true) : () => { });
    }

    public void Dispose()
    {
        ReleaseSnapshots();
        Db.Dispose();
        _cache?.Dispose();
        _tempDir?.Delete(recursive: true);
    }

    /// <summary>
    /// A fresh directory on the local file system: under /dev/shm where it exists (the same file
    /// system calls, mmap and fallocate included, without waiting for a loaded disk's fsyncs),
    /// else under the temporary directory; KVENGINE_METAMORPHIC_DISK_DIR overrides both.
    /// </summary>
    private static DirectoryInfo CreateLocalDirectory()
    {
        string? root = Environment.GetEnvironmentVariable("KVENGINE_METAMORPHIC_DISK_DIR");
        if (string.IsNullOrEmpty(root) && OperatingSystem.IsLinux() && Directory.Exists("/dev/shm"))
        {
            root = "/dev/shm";
        }
        if (!string.IsNullOrEmpty(root))
        {
            try
            {
                return Directory.CreateDirectory(Path.Combine(root, "kvengine-meta-" + Guid.NewGuid().ToString("N")));
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                // Not writable here: the temporary directory then.
            }
        }
        return Directory.CreateTempSubdirectory("kvengine-meta-");
    }

    private ColumnFamilyOptions Configure(ColumnFamilyOptions o, KvMergeOperator merge)
    {
        o.MergeOperator = merge;
        _config.Family?.Invoke(o);
        if (_cache != null)
        {
            o.BlockCache = _cache;
        }
        return o;
    }

    private DbView Open(string path, bool readOnly, Action? onDispose)
    {
        KvDb db = readOnly ? KvDb.OpenReadOnly(path, _options, _descriptors) : KvDb.Open(path, _options, _descriptors);
        var handles = new ColumnFamilyHandle[_descriptors.Count];
        for (int f = 0; f < handles.Length; f++)
        {
            handles[f] = f == 0 ? db.DefaultColumnFamily : db.GetColumnFamily(FamilyName(f)) ?? throw new InvalidOperationException($"no family {FamilyName(f)}");
        }
        return new DbView(db, handles, _config.SingleKeyspace, ConfinesPrefixes, id => _snapshots.GetValueOrDefault(id), onDispose);
    }

    private void ReleaseSnapshots()
    {
        foreach (Snapshot s in _snapshots.Values)
        {
            s.Dispose();
        }
        _snapshots.Clear();
    }
}
