using KvEngine.Format;
using KvEngine.Util;

namespace KvEngine.Table;

/// <summary>
/// The external-file properties SstFileWriter writes and the global sequence number a reader
/// derives from them (RocksDB's table/sst_file_writer_collectors.h and
/// BlockBasedTable::GetGlobalSequenceNumber). Stateless and thread-safe.
/// </summary>
internal static class ExternalSstFile
{
    /// <summary>The version SstFileWriter writes (2: a global_seqno property follows).</summary>
    public const uint Version = 2;

    /// <summary>The properties an SstFileWriter file carries: version 2 and a global seqno of 0.</summary>
    public static Dictionary<string, byte[]> WriterProperties()
    {
        var version = new byte[4];
        Coding.EncodeFixed32(version, Version);
        return new Dictionary<string, byte[]>(StringComparer.Ordinal)
        {
            [TablePropertyNames.ExternalSstFileVersion] = version,
            [TablePropertyNames.ExternalSstFileGlobalSeqno] = new byte[8],
        };
    }

    /// <summary>
    /// The sequence number every key of the table is read with, or 0 for "as stored" (an ordinary
    /// table, a version-1 external file, or an external file whose global seqno is 0).
    /// <paramref name="largestSequence"/> is the file's largest_seqno from the MANIFEST, or
    /// <see cref="InternalKeys.MaxSequenceNumber"/> when unknown (a table read on its own). Rules:
    /// no version property: ordinary (a global_seqno property there is corruption); version 1: none
    /// (and no global_seqno property); version 2: the property (0 when absent), else the MANIFEST's
    /// value when the property is 0 (ingestion without write_global_seqno); a non-zero property
    /// that differs from a known MANIFEST value is corruption.
    /// </summary>
    public static ulong GlobalSequenceNumber(TableProperties properties, ulong largestSequence, string source)
    {
        Dictionary<string, byte[]> user = properties.UserCollected;
        bool hasSeqno = user.TryGetValue(TablePropertyNames.ExternalSstFileGlobalSeqno, out byte[]? seqnoBytes);
        if (!user.TryGetValue(TablePropertyNames.ExternalSstFileVersion, out byte[]? versionBytes))
        {
            if (hasSeqno)
            {
                throw new KvCorruptionException($"{source}: a global sequence number property in a table that is not an external file.");
            }
            return 0;
        }
        if (versionBytes.Length != 4)
        {
            throw new KvCorruptionException($"{source}: external file version property is {versionBytes.Length} bytes, not 4.");
        }
        uint version = Coding.DecodeFixed32(versionBytes);
        if (version < 2)
        {
            if (hasSeqno || version != 1)
            {
                throw new KvCorruptionException($"{source}: external file version {version} with a global sequence number property.");
            }
            return 0;
        }
        ulong seqno = 0;
        if (hasSeqno)
        {
            if (seqnoBytes!.Length != 8)
            {
                throw new KvCorruptionException($"{source}: global sequence number property is {seqnoBytes.Length} bytes, not 8.");
            }
            seqno = Coding.DecodeFixed64(seqnoBytes);
        }
        if (largestSequence < InternalKeys.MaxSequenceNumber)
        {
            if (seqno == 0)
            {
                seqno = largestSequence;
            }
            if (seqno != largestSequence)
            {
                throw new KvCorruptionException(
                    $"{source}: global sequence number {seqno} differs from the file's largest sequence number {largestSequence} in the MANIFEST.");
            }
        }
        if (seqno > InternalKeys.MaxSequenceNumber)
        {
            throw new KvCorruptionException($"{source}: global sequence number {seqno} is out of range.");
        }
        return seqno;
    }
}
