using KvEngine.Util;

namespace KvEngine.Table;

/// <summary>External (SstFileWriter) tables: the properties block and the global sequence number.</summary>
internal sealed partial class TableReader
{
    /// <summary>
    /// The sequence number every entry of this table is read with (an ingested external file's
    /// global seqno), or 0 when entries keep their stored sequence numbers.
    /// </summary>
    public ulong GlobalSequenceNumber { get; }

    /// <summary>
    /// Reads the properties block. Ingestion overwrites an external file's global seqno in place
    /// without updating the block checksum, so, as RocksDB does, a block that fails its checksum
    /// is accepted when it matches with those 8 bytes zeroed.
    /// </summary>
    private TableProperties ReadProperties(BlockHandle handle)
    {
        try
        {
            using Block block = ReadMetaBlock(handle, "properties");
            return TablePropertiesCodec.Decode(block, handle.Offset);
        }
        catch (KvCorruptionException)
        {
            // Retried only as a stale-checksum external file; any other damage fails again below.
            BlockScratch scratch = ReadRawBlock(handle, verifyChecksum: false, "properties", out int size);
            try
            {
                Span<byte> raw = scratch.Span;
                if (raw[size] != 0)
                {
                    throw; // properties blocks are never compressed; this one is damaged
                }
                TableProperties properties;
                using (var block = new Block(raw[..size].ToArray(), size, pooled: false, isDataBlock: false, FileName, "properties", handle.Offset))
                {
                    properties = TablePropertiesCodec.Decode(block, handle.Offset);
                }
                ulong offset = properties.ExternalSstFileGlobalSeqnoOffset;
                if (offset == 0 || offset < handle.Offset || offset - handle.Offset + 8 > (ulong)size)
                {
                    throw;
                }
                raw.Slice((int)(offset - handle.Offset), 8).Clear();
                VerifyBlockChecksum(raw, handle, "properties");
                return properties;
            }
            finally
            {
                scratch.Dispose();
            }
        }
    }
}
