using KvEngine.Compression;

namespace KvEngine.Table;

/// <summary>
/// Appends one block (payload plus its 5-byte trailer) to the table being written and returns its
/// handle; lets index and filter builders that produce several blocks (partitions, then a top
/// level) write them in order. Implemented by <see cref="TableBuilder"/>; not thread-safe.
/// </summary>
internal interface ITableBlockWriter
{
    /// <summary>
    /// Writes <paramref name="raw"/>, compressed with <paramref name="compression"/> when that saves
    /// at least an eighth (otherwise raw), and returns the handle (size excludes the trailer).
    /// </summary>
    BlockHandle WriteBlock(ReadOnlySpan<byte> raw, CompressionType compression);
}
