namespace KvEngine.Prefix;

/// <summary>
/// RocksDB's FixedPrefixTransform: the first <see cref="Length"/> bytes; shorter keys are out of
/// the domain. Immutable, thread-safe.
/// </summary>
internal sealed class FixedPrefixExtractor : KvPrefixExtractor
{
    public const string NamePrefix = "rocksdb.FixedPrefix.";

    public FixedPrefixExtractor(int length)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(length, 1);
        Length = length;
        Name = NamePrefix + length.ToString(System.Globalization.CultureInfo.InvariantCulture);
    }

    public int Length { get; }

    public override string Name { get; }

    public override bool InDomain(ReadOnlySpan<byte> key) => key.Length >= Length;

    public override ReadOnlySpan<byte> Transform(ReadOnlySpan<byte> key)
    {
        if (key.Length < Length)
        {
            throw new ArgumentException($"The key ({key.Length} bytes) is shorter than the fixed prefix ({Length}): out of the domain.", nameof(key));
        }
        return key[..Length];
    }
}
