namespace KvEngine.Versions;

/// <summary>
/// A WAL tracked in the MANIFEST (track_and_verify_wals_in_manifest; RocksDB db/wal_edit.h), with
/// its synced size when known. Immutable.
/// </summary>
internal sealed record WalAddition(ulong LogNumber, ulong? SyncedSize);
