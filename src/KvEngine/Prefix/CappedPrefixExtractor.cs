namespace KvEngine.Prefix;

/// <summary>
/// RocksDB's CappedPrefixTransform: the first min(key length, <see cref="CapLength"/>) bytes;
/// every key is in the domain. Immutable, thread-safe.
/// </summary>
internal sealed class CappedPrefixExtractor : KvPrefixExtractor
{
    public const string NamePrefix = "rocksdb.CappedPrefix.";

    public CappedPrefixExtractor(int capLength)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(capLength, 1);
        CapLength = capLength;
        Name = NamePrefix + capLength.ToString(System.Globalization.CultureInfo.InvariantCulture);
    }

    public int CapLength { get; }

    public override string Name { get; }

    public override bool InDomain(ReadOnlySpan<byte> key) => true;

    public override ReadOnlySpan<byte> Transform(ReadOnlySpan<byte> key) => key[..Math.Min(key.Length, CapLength)];
}
