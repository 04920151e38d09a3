using System.Text;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Table;
using KvEngine.Util;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Table;

/// <summary>
/// The table reader's handling of an external file's global sequence number: from the property
/// (written in place by ingestion, leaving the properties checksum stale) or from the MANIFEST's
/// largest_seqno, applied to every point entry and range tombstone, with seeks ordered as the
/// rewritten keys; inconsistent or misplaced properties are corruption.
/// </summary>
public class GlobalSequenceNumberTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-globalseq-");

    public void Dispose() => _dir.Delete(recursive: true);

    private static byte[] B(string s) => Encoding.ASCII.GetBytes(s);

    /// <summary>An SstFileWriter file: a, c, e, g put, d deleted, [h, k) range-deleted.</summary>
    private byte[] ExternalFile()
    {
        string path = Path.Combine(_dir.FullName, "x.sst");
        using (var writer = new SstFileWriter(new ColumnFamilyOptions { BlockSize = 256, BloomBitsPerKey = 10 }))
        {
            writer.Open(path);
            writer.Put(B("a"), B("A"));
            writer.Put(B("c"), B("C"));
            writer.Delete(B("d"));
            writer.Put(B("e"), B("E"));
            writer.Put(B("g"), B("G"));
            writer.DeleteRange(B("h"), B("k"));
            writer.Finish();
        }
        return File.ReadAllBytes(path);
    }

    private static TableOptions Options => new() { FilterPolicy = new KvEngine.Filters.FastLocalBloomPolicy(10) };

    private static TableReader Open(byte[] file, ulong largestSequence = InternalKeys.MaxSequenceNumber) =>
        TableReader.Open(new MemoryRandomAccessFile(file), file.Length, Options, "x.sst", largestSequence: largestSequence);

    /// <summary>Overwrites the global seqno property in place, as ingestion with write_global_seqno does.</summary>
    private static byte[] WithGlobalSeqno(byte[] file, ulong seqno)
    {
        ulong offset;
        using (TableReader reader = Open(file))
        {
            offset = reader.Properties.ExternalSstFileGlobalSeqnoOffset;
        }
        Assert.NotEqual(0UL, offset);
        byte[] patched = (byte[])file.Clone();
        Coding.EncodeFixed64(patched.AsSpan((int)offset, 8), seqno);
        return patched;
    }

    [Fact]
    public void AWrittenBackGlobalSeqnoAppliesToEveryEntry()
    {
        byte[] file = WithGlobalSeqno(ExternalFile(), 100);
        using TableReader reader = Open(file);
        Assert.Equal(100UL, reader.GlobalSequenceNumber);

        using (InternalIterator it = reader.NewIterator(verifyChecksums: true))
        {
            var keys = new List<(string, ulong, ValueType)>();
            for (it.SeekToFirst(); it.Valid; it.Next())
            {
                keys.Add((Encoding.ASCII.GetString(InternalKeys.UserKey(it.Key)), InternalKeys.Sequence(it.Key), InternalKeys.Type(it.Key)));
            }
            Assert.Equal([("a", 100UL, ValueType.Value), ("c", 100UL, ValueType.Value), ("d", 100UL, ValueType.Deletion), ("e", 100UL, ValueType.Value), ("g", 100UL, ValueType.Value)], keys);
        }
        using (InternalIterator tombstones = reader.NewRangeTombstoneIterator()!)
        {
            tombstones.SeekToFirst();
            Assert.True(tombstones.Valid);
            Assert.Equal(100UL, InternalKeys.Sequence(tombstones.Key));
            Assert.Equal(ValueType.RangeDeletion, InternalKeys.Type(tombstones.Key));
        }

        var value = new System.Buffers.ArrayBufferWriter<byte>();
        Assert.True(reader.TryGet(B("c"), 100, value, out ValueType type, verifyChecksums: true));
        Assert.Equal(ValueType.Value, type);
        Assert.Equal("C", Encoding.ASCII.GetString(value.WrittenSpan));
        Assert.False(reader.TryGet(B("c"), 99, new System.Buffers.ArrayBufferWriter<byte>(), out _, verifyChecksums: true)); // newer than the reader
        Assert.True(reader.TryGet(B("d"), 500, new System.Buffers.ArrayBufferWriter<byte>(), out type, verifyChecksums: true));
        Assert.Equal(ValueType.Deletion, type);
        // A covering range tombstone newer than the entry's global seqno hides it; an older one does not.
        Assert.True(reader.TryGet(B("e"), 500, new System.Buffers.ArrayBufferWriter<byte>(), out type, true, true, coveringSequence: 101));
        Assert.Equal(ValueType.Deletion, type);
        Assert.True(reader.TryGet(B("e"), 500, new System.Buffers.ArrayBufferWriter<byte>(), out type, true, true, coveringSequence: 100));
        Assert.Equal(ValueType.Value, type);
    }

    [Fact]
    public void SeeksOrderEntriesAsTheirRewrittenKeys()
    {
        const ulong global = 100;
        using TableReader reader = Open(WithGlobalSeqno(ExternalFile(), global));
        var model = new List<byte[]>();
        using (InternalIterator all = reader.NewIterator(verifyChecksums: true))
        {
            for (all.SeekToFirst(); all.Valid; all.Next())
            {
                model.Add(all.Key.ToArray());
            }
        }
        using InternalIterator it = reader.NewIterator(verifyChecksums: true);
        foreach (string user in new[] { "", "a", "b", "c", "d", "e", "f", "g", "z" })
        {
            foreach (ulong seq in new ulong[] { 0, 50, global - 1, global, global + 1, InternalKeys.MaxSequenceNumber })
            {
                byte[] target = InternalKeys.Create(B(user), seq, ValueType.ValueTypeForSeek);
                byte[]? expectedSeek = model.FirstOrDefault(k => InternalKeyComparer.Compare(k, target) >= 0);
                it.Seek(target);
                Assert.Equal(expectedSeek != null, it.Valid);
                if (expectedSeek != null)
                {
                    Assert.Equal(expectedSeek, it.Key.ToArray());
                }
                byte[]? expectedPrev = model.LastOrDefault(k => InternalKeyComparer.Compare(k, target) <= 0);
                it.SeekForPrev(target);
                Assert.Equal(expectedPrev != null, it.Valid);
                if (expectedPrev != null)
                {
                    Assert.Equal(expectedPrev, it.Key.ToArray());
                }
            }
        }
        it.SeekToLast();
        Assert.Equal("g", Encoding.ASCII.GetString(InternalKeys.UserKey(it.Key)));
        it.Prev();
        Assert.Equal(InternalKeys.Create(B("e"), global, ValueType.Value), it.Key.ToArray());
    }

    [Fact]
    public void TheManifestSuppliesTheSeqnoWhenTheFileRecordsZero()
    {
        byte[] file = ExternalFile();
        using (TableReader unknown = Open(file))
        {
            Assert.Equal(0UL, unknown.GlobalSequenceNumber); // read on its own: entries as stored
        }
        using (TableReader ingested = Open(file, largestSequence: 77))
        {
            Assert.Equal(77UL, ingested.GlobalSequenceNumber);
        }
        byte[] patched = WithGlobalSeqno(file, 100);
        using (TableReader agreeing = Open(patched, largestSequence: 100))
        {
            Assert.Equal(100UL, agreeing.GlobalSequenceNumber);
        }
        KvCorruptionException e = Assert.Throws<KvCorruptionException>(() => Open(patched, largestSequence: 77));
        Assert.Contains("differs", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void ADamagedPropertiesBlockIsStillCorruption()
    {
        byte[] file = WithGlobalSeqno(ExternalFile(), 100);
        ulong offset;
        using (TableReader reader = Open(file))
        {
            offset = reader.Properties.ExternalSstFileGlobalSeqnoOffset;
        }
        file[(int)offset - 3] ^= 0x40; // inside the properties block, outside the 8 seqno bytes
        Assert.Throws<KvCorruptionException>(() => Open(file));
    }

    private static byte[] TableWithProperties(Dictionary<string, byte[]> properties)
    {
        using var file = new MemoryWritableFile();
        using (var builder = new TableBuilder(new TableOptions(), file, new TableBuildContext { UserProperties = properties }))
        {
            builder.Add(InternalKeys.Create(B("k"), 5, ValueType.Value), B("v"));
            builder.Finish();
        }
        return file.ToArray();
    }

    [Fact]
    public void MisplacedOrMalformedExternalPropertiesAreCorruption()
    {
        byte[] Fixed32(uint v)
        {
            var b = new byte[4];
            Coding.EncodeFixed32(b, v);
            return b;
        }
        // A global seqno without a version: not an external file.
        Assert.Throws<KvCorruptionException>(() => Open(TableWithProperties(new() { [TablePropertyNames.ExternalSstFileGlobalSeqno] = new byte[8] })));
        // Version 1 has no global seqno.
        Assert.Throws<KvCorruptionException>(() => Open(TableWithProperties(new()
        {
            [TablePropertyNames.ExternalSstFileVersion] = Fixed32(1),
            [TablePropertyNames.ExternalSstFileGlobalSeqno] = new byte[8],
        })));
        using (TableReader v1 = Open(TableWithProperties(new() { [TablePropertyNames.ExternalSstFileVersion] = Fixed32(1) }), largestSequence: 9))
        {
            Assert.Equal(0UL, v1.GlobalSequenceNumber);
        }
        Assert.Throws<KvCorruptionException>(() => Open(TableWithProperties(new() { [TablePropertyNames.ExternalSstFileVersion] = new byte[3] })));
        Assert.Throws<KvCorruptionException>(() => Open(TableWithProperties(new()
        {
            [TablePropertyNames.ExternalSstFileVersion] = Fixed32(2),
            [TablePropertyNames.ExternalSstFileGlobalSeqno] = new byte[5],
        })));
        byte[] huge = new byte[8];
        Coding.EncodeFixed64(huge, ulong.MaxValue);
        Assert.Throws<KvCorruptionException>(() => Open(TableWithProperties(new()
        {
            [TablePropertyNames.ExternalSstFileVersion] = Fixed32(2),
            [TablePropertyNames.ExternalSstFileGlobalSeqno] = huge,
        })));
        // An ordinary table is unaffected by the MANIFEST's sequence numbers.
        using TableReader plain = Open(TableWithProperties([]), largestSequence: 42);
        Assert.Equal(0UL, plain.GlobalSequenceNumber);
    }
}
