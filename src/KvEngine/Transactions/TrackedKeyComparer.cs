namespace KvEngine.Transactions;

/// <summary>Equality of (column family, key bytes) for the tracked-key table. Stateless, thread-safe.</summary>
internal sealed class TrackedKeyComparer : IEqualityComparer<(uint ColumnFamily, byte[] Key)>
{
    public static TrackedKeyComparer Instance { get; } = new();

    public bool Equals((uint ColumnFamily, byte[] Key) x, (uint ColumnFamily, byte[] Key) y) =>
        x.ColumnFamily == y.ColumnFamily && x.Key.AsSpan().SequenceEqual(y.Key);

    public int GetHashCode((uint ColumnFamily, byte[] Key) obj)
    {
        var hash = new HashCode();
        hash.Add(obj.ColumnFamily);
        hash.AddBytes(obj.Key);
        return hash.ToHashCode();
    }
}
