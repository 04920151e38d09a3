using System.Globalization;
using DotNext.IO;
using DotNext.Net.Cluster.Consensus.Raft.StateMachine;

namespace KvEngine.Replication.Snapshots;

/// <summary>
/// A Raft snapshot that is a KvEngine checkpoint directory (<c>snapshots/&lt;index&gt;-&lt;term&gt;</c>):
/// the database as it was after applying the entry <see cref="Index"/> of term <see cref="Term"/>.
/// Sent to a follower as a <see cref="SnapshotArchive"/> of the directory's files.
/// Invariants: the directory is complete (it was renamed into place after the checkpoint
/// finished) and never changes until <see cref="SnapshotStore"/> deletes it; the file list and
/// sizes are captured once, so <see cref="Length"/> is exact. Immutable, thread-safe; several
/// followers may stream it at once.
/// </summary>
/// <remarks>
/// DotNext documents <see cref="ISnapshot"/> as implemented by its own state machines; a state
/// machine that keeps its state on disk outside <c>SimpleStateMachine</c> has to provide one, and
/// the write-ahead log only reads <see cref="Index"/>, <see cref="Term"/>, <see cref="Length"/> and
/// <see cref="WriteToAsync{TWriter}"/> from it.
/// </remarks>
internal sealed class CheckpointSnapshot : ISnapshot
{
    private readonly IReadOnlyList<(string Name, long Size)> _files;

    private CheckpointSnapshot(string directory, long index, long term, DateTimeOffset timestamp, IReadOnlyList<(string Name, long Size)> files)
    {
        Directory = directory;
        Index = index;
        Term = term;
        Timestamp = timestamp;
        _files = files;
        Length = SnapshotArchive.GetLength(files);
    }

    /// <summary>The checkpoint directory.</summary>
    public string Directory { get; }

    /// <inheritdoc/>
    public long Index { get; }

    /// <inheritdoc/>
    public long Term { get; }

    /// <inheritdoc/>
    public DateTimeOffset Timestamp { get; }

    /// <summary>Bytes of the archive <see cref="WriteToAsync{TWriter}"/> produces.</summary>
    public long Length { get; }

    long? IDataTransferObject.Length => Length;

    bool IDataTransferObject.IsReusable => true;

    /// <summary>The name a checkpoint directory of <paramref name="index"/> and <paramref name="term"/> has.</summary>
    public static string DirectoryName(long index, long term) =>
        string.Create(CultureInfo.InvariantCulture, $"{index:D20}-{term:D20}");

    /// <summary>Parses a <see cref="DirectoryName"/>; false for any other name.</summary>
    public static bool TryParseDirectoryName(string name, out long index, out long term)
    {
        index = term = 0;
        return name.Length == 41 && name[20] == '-'
            && long.TryParse(name.AsSpan(0, 20), NumberStyles.None, CultureInfo.InvariantCulture, out index)
            && long.TryParse(name.AsSpan(21), NumberStyles.None, CultureInfo.InvariantCulture, out term);
    }

    /// <summary>Describes the complete checkpoint in <paramref name="directory"/>.</summary>
    public static CheckpointSnapshot Load(string directory, long index, long term)
    {
        var info = new DirectoryInfo(directory);
        var files = new List<(string, long)>();
        foreach (FileInfo file in info.EnumerateFiles())
        {
            files.Add((file.Name, file.Length));
        }
        files.Sort(static (a, b) => string.CompareOrdinal(a.Item1, b.Item1));
        return new CheckpointSnapshot(directory, index, term, new DateTimeOffset(info.LastWriteTimeUtc, TimeSpan.Zero), files);
    }

    /// <inheritdoc/>
    public ValueTask WriteToAsync<TWriter>(TWriter writer, CancellationToken token)
        where TWriter : notnull, IAsyncBinaryWriter =>
        SnapshotArchive.WriteAsync((block, ct) => writer.WriteAsync(block, null, ct), Directory, Index, Term, _files, token);

    /// <summary>Writes the archive to <paramref name="output"/> (tests, tools).</summary>
    public ValueTask WriteToAsync(Stream output, CancellationToken token) =>
        SnapshotArchive.WriteAsync(output.WriteAsync, Directory, Index, Term, _files, token);
}
