using KvEngine.RateLimiting;
using KvEngine.Storage;
using KvEngine.Table;
using KvEngine.Versions;

namespace KvEngine.Compaction;

/// <summary>
/// What a <see cref="CompactionJob"/> needs from its database: where files go, how tables are
/// built and read, and how output file numbers are allocated (the database registers each number
/// as a pending output, protected from the obsolete-file sweep, before returning it), and the
/// facts every output's properties record (its column family), and the rate limit its outputs'
/// writes are charged to at low priority (null: none), and the clock its outputs' times come from
/// (null: the system's). Immutable record.
/// </summary>
internal sealed record CompactionEnvironment(
    string Directory,
    IFileSystem FileSystem,
    TableCache Tables,
    TableOptions TableOptions,
    Func<ulong> NewOutputFileNumber,
    TableBuildContext? BuildContext = null,
    BackgroundWriteLimit? WriteLimit = null,
    TimeProvider? Clock = null);
