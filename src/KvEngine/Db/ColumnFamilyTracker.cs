using System.Globalization;
using KvEngine.Manifest;

namespace KvEngine.Db;

/// <summary>
/// Follows RocksDB column families through a MANIFEST replay. KvEngine serves only the default
/// family (id 0). A family that was created and later dropped is dead: its edits change nothing
/// here and its WAL records are skipped. A family that is still alive makes the database
/// unsupported (<see cref="ThrowIfOthersLive"/>). Family ids are never reused by RocksDB
/// (new id = max id + 1), so an id is added at most once. Not thread-safe.
/// </summary>
internal sealed class ColumnFamilyTracker
{
    private readonly Dictionary<uint, string> _live = new();
    private readonly HashSet<uint> _dropped = new();

    /// <summary>The largest family id the database has used (RocksDB's max_column_family).</summary>
    public uint MaxColumnFamily { get; private set; }

    /// <summary>Ids of families that were dropped; their WAL records are ignored at recovery.</summary>
    public IReadOnlySet<uint> Dropped => _dropped;

    /// <summary>
    /// Applies <paramref name="edit"/>'s family bookkeeping. Returns true when the edit describes
    /// the default family, so its file changes and log number apply to KvEngine's version; the
    /// database-wide fields (next file, last sequence, previous log) apply either way.
    /// </summary>
    public bool Apply(VersionEdit edit, string manifestName)
    {
        if (edit.HasMaxColumnFamily)
        {
            MaxColumnFamily = Math.Max(MaxColumnFamily, edit.MaxColumnFamily);
        }
        uint id = edit.ColumnFamily;
        if (id == 0)
        {
            if (edit.IsColumnFamilyDrop || edit.ColumnFamilyAdd is not (null or "default"))
            {
                throw new KvCorruptionException($"{manifestName} adds or drops the default column family.");
            }
            return true;
        }
        MaxColumnFamily = Math.Max(MaxColumnFamily, id);
        string idText = id.ToString(CultureInfo.InvariantCulture);
        if (edit.ColumnFamilyAdd is string name)
        {
            if (_live.ContainsKey(id) || _dropped.Contains(id))
            {
                throw new KvCorruptionException($"{manifestName} adds column family {idText} twice.");
            }
            _live[id] = name;
        }
        else if (edit.IsColumnFamilyDrop)
        {
            if (!_live.Remove(id))
            {
                throw new KvCorruptionException($"{manifestName} drops column family {idText}, which does not exist.");
            }
            _dropped.Add(id);
        }
        else if (!_live.ContainsKey(id))
        {
            throw new KvCorruptionException($"{manifestName} changes column family {idText}, which does not exist.");
        }
        return false;
    }

    /// <summary>Throws <see cref="KvException"/> naming the families other than the default that are alive.</summary>
    public void ThrowIfOthersLive(string manifestName)
    {
        if (_live.Count == 0)
        {
            return;
        }
        var names = new List<string>(_live.Count);
        foreach (KeyValuePair<uint, string> family in _live)
        {
            names.Add($"{family.Value} (id {family.Key.ToString(CultureInfo.InvariantCulture)})");
        }
        throw new KvException(
            $"{manifestName} describes column families other than the default: {string.Join(", ", names)}; " +
            "KvEngine supports only the default column family.");
    }
}
