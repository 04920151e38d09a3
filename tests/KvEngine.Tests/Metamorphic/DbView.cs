namespace KvEngine.Tests.Metamorphic;

/// <summary>
/// The reads of an open database under one configuration (the live one of a
/// <see cref="DbTarget"/>, or a checkpoint opened read-only, which this then owns): families to
/// handles, logical keys to stored keys. Not thread-safe.
/// </summary>
internal sealed class DbView : IMetaReader
{
    private readonly ColumnFamilyHandle[] _handles;
    private readonly bool _singleKeyspace;
    private readonly Func<int, Snapshot?> _snapshot;
    private readonly Action? _onDispose;

    /// <param name="handles">One per family of the op log; one (the default) with a single keyspace.</param>
    /// <param name="snapshot">The engine snapshot of an op log's snapshot id.</param>
    /// <param name="onDispose">Null: the database belongs to someone else; else closing it is this view's (then this runs).</param>
    public DbView(KvDb db, ColumnFamilyHandle[] handles, bool singleKeyspace, bool confinesPrefixes, Func<int, Snapshot?> snapshot, Action? onDispose)
    {
        Db = db;
        _handles = handles;
        _singleKeyspace = singleKeyspace;
        ConfinesPrefixes = confinesPrefixes;
        _snapshot = snapshot;
        _onDispose = onDispose;
    }

    public KvDb Db { get; }

    public bool ConfinesPrefixes { get; }

    /// <summary>The stored form of a logical key of <paramref name="family"/>.</summary>
    public byte[] Map(int family, byte[] key) => Prefixed(KeyspacePrefix(family), key);

    /// <summary>The handle that stores <paramref name="family"/>.</summary>
    public ColumnFamilyHandle Handle(int family) => _handles[_singleKeyspace ? 0 : family];

    /// <summary>The key prefix of <paramref name="family"/> with a single keyspace, else null.</summary>
    public byte[]? KeyspacePrefix(int family) => _singleKeyspace ? [(byte)('0' + family)] : null;

    /// <summary>The first stored key past <paramref name="family"/>'s keyspace (with a single keyspace), else null.</summary>
    public byte[]? KeyspaceEnd(int family) => _singleKeyspace ? [(byte)('0' + family + 1)] : null;

    public static byte[] Prefixed(byte[]? prefix, byte[] key) => prefix == null ? key : [.. prefix, .. key];

    public ReadOptions ReadOptions(int snapshot) => new() { Snapshot = snapshot < 0 ? null : _snapshot(snapshot) ?? throw new InvalidOperationException($"no snapshot s{snapshot}") };

    public IMetaCursor NewCursor(int family, int snapshot, byte[]? lower, byte[]? upper, bool prefixMode)
    {
        byte[]? prefix = KeyspacePrefix(family);
        ReadOptions options = ReadOptions(snapshot);
        options.IterateLowerBound = lower != null ? Map(family, lower) : prefix;
        options.IterateUpperBound = upper != null ? Map(family, upper) : KeyspaceEnd(family);
        options.PrefixSameAsStart = prefixMode;
        options.TotalOrderSeek = !prefixMode;
        return new DbCursor(Db.NewIterator(Handle(family), options), prefix);
    }

    public void Dispose()
    {
        if (_onDispose != null)
        {
            Db.Dispose();
            _onDispose();
        }
    }
}
