namespace KvEngine.Tests.Db;

/// <summary>
/// The snapshots a model-based test holds, each with a copy of the model as of when it was taken,
/// shared by the database, compaction and range-deletion model tests. Not thread-safe.
/// </summary>
internal sealed class ModelSnapshots : IDisposable
{
    private readonly List<(Snapshot Snap, SortedDictionary<byte[], byte[]> State)> _held = new();

    public int Count => _held.Count;

    public IReadOnlyList<(Snapshot Snap, SortedDictionary<byte[], byte[]> State)> Held => _held;

    /// <summary>Takes a snapshot (with a copy of <paramref name="model"/>) while fewer than <paramref name="max"/> are held; otherwise releases a random one.</summary>
    public void TakeOrRelease(KvDb db, SortedDictionary<byte[], byte[]> model, Random rng, int max)
    {
        if (_held.Count < max)
        {
            _held.Add((db.GetSnapshot(), new SortedDictionary<byte[], byte[]>(model, ByteArrayComparer.Instance)));
        }
        else
        {
            int i = rng.Next(_held.Count);
            _held[i].Snap.Dispose();
            _held.RemoveAt(i);
        }
    }

    /// <summary>A random held snapshot; requires <see cref="Count"/> &gt; 0.</summary>
    public (Snapshot Snap, SortedDictionary<byte[], byte[]> State) Pick(Random rng) => _held[rng.Next(_held.Count)];

    /// <summary>Releases every snapshot (before a reopen or at the end).</summary>
    public void ReleaseAll()
    {
        foreach ((Snapshot s, _) in _held)
        {
            s.Dispose();
        }
        _held.Clear();
    }

    public void Dispose() => ReleaseAll();
}
