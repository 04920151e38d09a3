using KvEngine.Prefix;

namespace KvEngine;

/// <summary>
/// Maps a user key to its prefix, for prefix Bloom filters and prefix seek (RocksDB's
/// SliceTransform as <c>prefix_extractor</c>). Set one in
/// <see cref="ColumnFamilyOptions.PrefixExtractor"/>; use <see cref="FixedPrefix"/> or
/// <see cref="CappedPrefix"/>, or derive your own.
/// <para>
/// Contract (RocksDB's): <see cref="Transform"/> returns a prefix of the key (a leading slice of
/// it), defined only for keys where <see cref="InDomain"/> is true; keys with the same prefix sort
/// together; <c>Transform(Transform(k)) == Transform(k)</c>. Keys out of the domain are never
/// filtered by prefix.
/// </para>
/// <para>
/// <see cref="Name"/> is persisted in the OPTIONS file and in every table
/// (<c>rocksdb.prefix.extractor.name</c>); a table written under another name is never filtered by
/// prefix. Implementations must be thread-safe and allocation-free (they run on every read and
/// table write).
/// </para>
/// </summary>
public abstract class KvPrefixExtractor
{
    /// <summary>The extractor's name (RocksDB's SliceTransform::Name/AsString), e.g. <c>rocksdb.FixedPrefix.8</c>.</summary>
    public abstract string Name { get; }

    /// <summary>True when <paramref name="key"/> has a prefix under this extractor.</summary>
    /// <param name="key">A user key.</param>
    public abstract bool InDomain(ReadOnlySpan<byte> key);

    /// <summary>The prefix of <paramref name="key"/>, a leading slice of it; call only when <see cref="InDomain"/> is true.</summary>
    /// <param name="key">A user key in the domain.</param>
    public abstract ReadOnlySpan<byte> Transform(ReadOnlySpan<byte> key);

    /// <summary>
    /// RocksDB's NewFixedPrefixTransform(<paramref name="length"/>), named
    /// <c>rocksdb.FixedPrefix.N</c>: the first <paramref name="length"/> bytes; keys shorter than
    /// that are out of the domain.
    /// </summary>
    /// <param name="length">Prefix length in bytes, at least 1.</param>
    public static KvPrefixExtractor FixedPrefix(int length) => new FixedPrefixExtractor(length);

    /// <summary>
    /// RocksDB's NewCappedPrefixTransform(<paramref name="capLength"/>), named
    /// <c>rocksdb.CappedPrefix.N</c>: the first min(key length, <paramref name="capLength"/>)
    /// bytes; every key is in the domain.
    /// </summary>
    /// <param name="capLength">Longest prefix in bytes, at least 1.</param>
    public static KvPrefixExtractor CappedPrefix(int capLength) => new CappedPrefixExtractor(capLength);

    /// <inheritdoc/>
    public override string ToString() => Name;
}
