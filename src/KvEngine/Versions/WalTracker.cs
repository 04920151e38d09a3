
namespace KvEngine.Versions;

/// <summary>
/// The WALs KvEngine recorded creating that are still live (at or above the log number). Every WAL
/// is recorded in a MANIFEST record of its own, written after the file exists and its directory
/// entry is durable and before any write goes to it; WALs below the log number are obsolete and
/// forgotten. So with an intact MANIFEST every tracked WAL exists on disk (the log number only
/// moves past a WAL in a synced edit, and only then is the WAL deleted): one that is missing
/// proves that edits which made it obsolete were lost (a damaged or truncated MANIFEST), and with
/// them the tables they added.
/// <code>
/// record := VersionEdit{ KvEngineWalsCreated(number*) }      (tag 12289, safe to ignore)
/// </code>
/// RocksDB's own WAL tracking (WalAddition2) is not used: RocksDB 7.8 opening such a MANIFEST
/// read-only without track_and_verify_wals_in_manifest crashes; it skips this tag.
/// Invariant: a new MANIFEST lists the tracked WALs at or above its log number in one record after
/// its snapshot. Not thread-safe: <see cref="VersionSet"/> guards it with its own lock.
/// </summary>
internal sealed class WalTracker
{
    private readonly SortedSet<ulong> _live = new();

    /// <summary>The tracked WAL numbers, ascending.</summary>
    public IReadOnlyCollection<ulong> Live => _live;

    /// <summary>Applies a recovered edit's WAL records.</summary>
    public void Apply(VersionEdit edit)
    {
        foreach (ulong n in edit.CreatedWals)
        {
            _live.Add(n);
        }
    }

    public void Add(ulong number) => _live.Add(number);

    /// <summary>Forgets the WALs below <paramref name="logNumber"/>: they are obsolete.</summary>
    public void DeleteBefore(ulong logNumber) => _live.RemoveWhere(n => n < logNumber);

    /// <summary>The record of creating <paramref name="number"/>.</summary>
    public static VersionEdit CreationEdit(ulong number)
    {
        var edit = new VersionEdit();
        edit.AddCreatedWal(number);
        return edit;
    }

    /// <summary>
    /// The record a new MANIFEST holds after its snapshot: the tracked WALs at or above
    /// <paramref name="logNumber"/>, or null when there are none.
    /// </summary>
    public VersionEdit? SnapshotEdit(ulong logNumber)
    {
        VersionEdit? edit = null;
        foreach (ulong n in _live)
        {
            if (n >= logNumber)
            {
                edit ??= new VersionEdit();
                edit.AddCreatedWal(n);
            }
        }
        return edit;
    }
}
