using KvEngine.Util;

namespace KvEngine.Table;

/// <summary>
/// The fixed-size tail of a table, format_version 1..5 (RocksDB's "legacy" footer with a
/// checksum type byte):
/// <code>
/// Footer := checksum_type: byte
///           metaindex: BlockHandle  index: BlockHandle
///           padding: zero bytes up to 41 bytes from the footer start
///           format_version: fixed32
///           magic: fixed64 = 0x88e241b785f4cff7          // 53 bytes in all
/// </code>
/// Immutable value.
/// </summary>
internal readonly record struct Footer(ChecksumType ChecksumType, BlockHandle MetaIndex, BlockHandle Index, uint FormatVersion)
{
    public void EncodeTo(Span<byte> destination)
    {
        Span<byte> f = destination[..TableFormat.FooterSize];
        f.Clear();
        f[0] = (byte)ChecksumType;
        int n = 1 + MetaIndex.EncodeTo(f[1..]);
        Index.EncodeTo(f[n..]);
        Coding.EncodeFixed32(f[(1 + (2 * BlockHandle.MaxEncodedLength))..], FormatVersion);
        Coding.EncodeFixed64(f[^8..], TableFormat.BlockBasedTableMagic);
    }

    /// <summary>
    /// Parses the last <see cref="TableFormat.FooterSize"/> bytes of a table. Throws
    /// <see cref="KvCorruptionException"/> naming <paramref name="source"/> for a bad magic,
    /// an unreadable format_version, an unknown checksum type or malformed handles.
    /// </summary>
    public static Footer Decode(ReadOnlySpan<byte> footer, string source)
    {
        if (footer.Length != TableFormat.FooterSize)
        {
            throw new KvCorruptionException($"{source}: footer is {footer.Length} bytes, expected {TableFormat.FooterSize}.");
        }
        ulong magic = Coding.DecodeFixed64(footer[^8..]);
        if (magic == TableFormat.LegacyBlockBasedTableMagic)
        {
            throw new KvCorruptionException($"{source}: LevelDB-format table (format_version 0) is not supported.");
        }
        if (magic != TableFormat.BlockBasedTableMagic)
        {
            throw new KvCorruptionException($"{source}: bad table magic number 0x{magic:x16} (not a block-based table).");
        }
        uint version = Coding.DecodeFixed32(footer[(1 + (2 * BlockHandle.MaxEncodedLength))..]);
        if (version < TableFormat.MinReadFormatVersion || version > TableFormat.MaxReadFormatVersion)
        {
            throw new KvCorruptionException(
                $"{source}: unsupported or corrupt format_version {version} (readable: {TableFormat.MinReadFormatVersion}..{TableFormat.MaxReadFormatVersion}).");
        }
        byte checksum = footer[0];
        if (checksum > (byte)ChecksumType.Xxh3)
        {
            throw new KvCorruptionException($"{source}: unknown checksum type {checksum} in footer.");
        }
        ReadOnlySpan<byte> handles = footer.Slice(1, 2 * BlockHandle.MaxEncodedLength);
        if (!BlockHandle.TryDecode(ref handles, out BlockHandle metaIndex) || !BlockHandle.TryDecode(ref handles, out BlockHandle index))
        {
            throw new KvCorruptionException($"{source}: malformed block handles in footer.");
        }
        foreach (byte b in handles)
        {
            if (b != 0)
            {
                throw new KvCorruptionException($"{source}: footer padding is not zero.");
            }
        }
        return new Footer((ChecksumType)checksum, metaIndex, index, version);
    }
}
