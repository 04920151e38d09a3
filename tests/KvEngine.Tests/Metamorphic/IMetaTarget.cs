namespace KvEngine.Tests.Metamorphic;

/// <summary>
/// What an op log runs against: the engine under one configuration (<see cref="DbTarget"/>) or the
/// in-memory model (<see cref="MetaModel"/>). <see cref="MetaExecutor"/> drives it and turns
/// every read into text. Not thread-safe.
/// </summary>
internal interface IMetaTarget : IMetaReader
{
    /// <summary>The op log's family count (0 = default, 1.. = "cf1"...).</summary>
    int Families { get; }

    /// <summary>A Put, Merge, Delete, SingleDelete, DeleteRange or Batch.</summary>
    void Write(MetaOp op);

    /// <summary>Writes the records of an Ingest op to an SstFileWriter file and ingests it.</summary>
    void Ingest(MetaOp op);

    void TakeSnapshot(int id);

    void ReleaseSnapshot(int id);

    byte[]? Get(int family, byte[] key, int snapshot);

    byte[]?[] MultiGet(int family, IReadOnlyList<byte[]> keys, int snapshot);

    /// <param name="family">-1 for every family.</param>
    void Flush(int family);

    void Compact(int family, byte[]? begin, byte[]? end);

    void Reopen();

    /// <summary>A checkpoint of the current state, opened read-only (the caller disposes it).</summary>
    IMetaReader Checkpoint();
}
