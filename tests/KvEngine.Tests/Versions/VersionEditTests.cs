using System.Text;
using KvEngine.Format;
using KvEngine.Versions;
using KvEngine.Util;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Versions;

public class VersionEditTests
{
    // Record 2 of a MANIFEST written by RocksDB 7.8.3 (`ldb put` three times): two flushed files.
    private const string RocksDbEditHex =
        "020a0a0a040267000dd7070a6b3201020000000000000a6b32010200000000000002020505efd683d806060100" +
        "07000807556e6b6e6f776e03080a000000000000000c10b78cd7901698683197fae28c870363a301670008d707" +
        "0a6b3101010000000000000a6b31010100000000000001010505efd683d80606010007000807556e6b6e6f776e" +
        "0c108e9263feb85fc98581675bf49224a28901";

    private const string RocksDbEditText =
        "VersionEdit {\n  LogNumber: 10\n  MinLogNumberToKeep: 10\n  LastSeq: 2\n" +
        "  AddFile: 0 13 983 'k2' seq:2, type:1 .. 'k2' seq:2, type:1 oldest_ancester_time:1795222383 file_creation_time:0 file_checksum: file_checksum_func_name: Unknown unique_id(internal): {3560262728123124919,11773257731595762327}\n" +
        "  AddFile: 0 8 983 'k1' seq:1, type:1 .. 'k1' seq:1, type:1 oldest_ancester_time:1795222383 file_creation_time:0 file_checksum: file_checksum_func_name: Unknown unique_id(internal): {9640341725509816974,9917529543006709633}\n" +
        "  ColumnFamily: 0\n}";

    private static byte[] Encode(VersionEdit edit)
    {
        using var buffer = new ByteBuffer();
        edit.EncodeTo(buffer);
        return buffer.WrittenSpan.ToArray();
    }

    private static byte[] Key(string user, ulong seq, ValueType type) =>
        InternalKeys.Create(Encoding.ASCII.GetBytes(user), seq, type);

    private static FileMetaData File(ulong number, string smallest, string largest) => new()
    {
        Number = number,
        FileSize = 4096 + number,
        Smallest = Key(smallest, 5, ValueType.Value),
        Largest = Key(largest, 9, ValueType.Deletion),
        SmallestSeqno = 5,
        LargestSeqno = 9,
        OldestAncesterTime = 1_700_000_000,
        FileCreationTime = 1_700_000_100,
    };

    private static VersionEdit FullEdit()
    {
        var edit = new VersionEdit
        {
            DbId = "8f7d2f0e-3b5d-4c1e-9a0b-123456789abc",
            Comparator = "leveldb.BytewiseComparator",
            LogNumber = 12,
            PrevLogNumber = 0,
            NextFileNumber = 300,
            LastSequence = 1UL << 40,
            MinLogNumberToKeep = 11,
            MaxColumnFamily = 0,
            AtomicGroupRemaining = 2,
            FullHistoryTsLow = new byte[] { 1, 2, 3 },
            WalDeletionBefore = 7,
        };
        edit.AddCompactCursor(2, Key("cursor", 77, ValueType.Value));
        edit.DeleteFile(1, 20);
        edit.DeleteFile(3, 1UL << 50);
        edit.AddFile(0, File(100, "a", "m"));
        FileMetaData rich = File(101, "n", "z");
        rich.PathId = 2;
        rich.Temperature = 0x08;
        rich.MarkedForCompaction = true;
        rich.OldestBlobFileNumber = 55;
        rich.FileChecksum = new byte[] { 0xDE, 0xAD, 0xBE, 0xEF };
        rich.FileChecksumFuncName = "FileChecksumCrc32c";
        rich.UniqueId0 = 0x1122334455667788;
        rich.UniqueId1 = 0x99AABBCCDDEEFF00;
        rich.EpochNumber = 42;
        edit.AddFile(6, rich);
        edit.AddBlobFileAddition(new BlobFileAddition(9, 10, 11, "crc32c", new byte[] { 1, 2, 3, 4 }));
        edit.AddBlobFileGarbage(new BlobFileGarbage(9, 1, 100));
        edit.AddWal(new WalAddition(12, 4096));
        edit.AddWal(new WalAddition(13, null));
        return edit;
    }

    [Fact]
    public void RocksDbEditDecodesAndReencodesByteForByte()
    {
        byte[] bytes = Convert.FromHexString(RocksDbEditHex);
        VersionEdit edit = VersionEdit.Decode(bytes);
        Assert.Equal(RocksDbEditText, edit.ToString());
        Assert.Equal(2, edit.NewFiles.Count);
        Assert.Equal(13UL, edit.NewFiles[0].File.Number);
        Assert.Equal(Array.Empty<byte>(), edit.NewFiles[0].File.FileChecksum);
        Assert.Equal(bytes, Encode(edit));
    }

    [Fact]
    public void EveryFieldRoundTrips()
    {
        VersionEdit edit = FullEdit();
        byte[] bytes = Encode(edit);
        VersionEdit back = VersionEdit.Decode(bytes);
        Assert.Equal(edit.ToString(), back.ToString());
        Assert.Equal(bytes, Encode(back));

        Assert.Equal(edit.DbId, back.DbId);
        Assert.True(back.HasPrevLogNumber);
        Assert.Equal(0UL, back.PrevLogNumber);
        Assert.True(back.HasMaxColumnFamily);
        Assert.Equal(2u, back.AtomicGroupRemaining);
        Assert.Equal(new byte[] { 1, 2, 3 }, back.FullHistoryTsLow);
        Assert.Equal(7UL, back.WalDeletionBefore);
        Assert.Equal(new[] { (1, 20UL), (3, 1UL << 50) }, back.DeletedFiles);
        Assert.Equal(2, back.CompactCursors[0].Level);
        FileMetaData rich = back.NewFiles[1].File;
        Assert.Equal(6, back.NewFiles[1].Level);
        Assert.Equal(2u, rich.PathId);
        Assert.Equal(0x08, rich.Temperature);
        Assert.True(rich.MarkedForCompaction);
        Assert.Equal(55UL, rich.OldestBlobFileNumber);
        Assert.Equal(new byte[] { 0xDE, 0xAD, 0xBE, 0xEF }, rich.FileChecksum);
        Assert.Equal("FileChecksumCrc32c", rich.FileChecksumFuncName);
        Assert.Equal(0x99AABBCCDDEEFF00UL, rich.UniqueId1);
        Assert.Equal(42UL, rich.EpochNumber);
        Assert.Equal(5UL, rich.SmallestSeqno);
        Assert.Equal(9UL, rich.LargestSeqno);
        Assert.Equal(new BlobFileGarbage(9, 1, 100), back.BlobFileGarbages.Single());
        Assert.Equal("crc32c", back.BlobFileAdditions.Single().ChecksumMethod);
        Assert.Equal(new[] { new WalAddition(12, 4096), new WalAddition(13, null) }, back.WalAdditions);
    }

    [Fact]
    public void ColumnFamilyEditsRoundTrip()
    {
        var add = new VersionEdit { ColumnFamily = 3, ColumnFamilyAdd = "users", MaxColumnFamily = 3 };
        VersionEdit back = VersionEdit.Decode(Encode(add));
        Assert.Equal(3u, back.ColumnFamily);
        Assert.Equal("users", back.ColumnFamilyAdd);
        Assert.False(back.IsColumnFamilyDrop);

        var drop = new VersionEdit { ColumnFamily = 3, IsColumnFamilyDrop = true };
        back = VersionEdit.Decode(Encode(drop));
        Assert.True(back.IsColumnFamilyDrop);
        Assert.Null(back.ColumnFamilyAdd);
    }

    [Fact]
    public void EmptyEditIsEmptyBytes()
    {
        var edit = new VersionEdit();
        Assert.Empty(Encode(edit));
        VersionEdit back = VersionEdit.Decode(ReadOnlySpan<byte>.Empty);
        Assert.False(back.HasLogNumber || back.HasNextFileNumber || back.HasLastSequence);
        Assert.Null(back.Comparator);
        Assert.Equal(0u, back.ColumnFamily);
    }

    [Fact]
    public void DefaultColumnFamilyIsNotWritten()
    {
        Assert.Equal(new byte[] { 2, 5 }, Encode(new VersionEdit { LogNumber = 5, ColumnFamily = 0 }));
    }

    [Fact]
    public void OlderNewFileRecordsDecode()
    {
        byte[] small = Key("a", 3, ValueType.Value);
        byte[] large = Key("b", 4, ValueType.Value);
        using var buffer = new ByteBuffer();
        // NewFile (LevelDB): level 1, number 7, size 100
        buffer.AppendVarint32(7); buffer.AppendVarint32(1); buffer.AppendVarint64(7); buffer.AppendVarint64(100);
        buffer.AppendLengthPrefixed(small); buffer.AppendLengthPrefixed(large);
        // NewFile2: level 2, number 8, size 200, seqnos 3..4
        buffer.AppendVarint32(100); buffer.AppendVarint32(2); buffer.AppendVarint64(8); buffer.AppendVarint64(200);
        buffer.AppendLengthPrefixed(small); buffer.AppendLengthPrefixed(large); buffer.AppendVarint64(3); buffer.AppendVarint64(4);
        // NewFile3: level 3, number 9, path 1, size 300, seqnos 3..4
        buffer.AppendVarint32(102); buffer.AppendVarint32(3); buffer.AppendVarint64(9); buffer.AppendVarint32(1);
        buffer.AppendVarint64(300); buffer.AppendLengthPrefixed(small); buffer.AppendLengthPrefixed(large);
        buffer.AppendVarint64(3); buffer.AppendVarint64(4);

        VersionEdit edit = VersionEdit.Decode(buffer.WrittenSpan);
        Assert.Equal(3, edit.NewFiles.Count);
        Assert.Equal((1, 7UL, 100UL, InternalKeys.MaxSequenceNumber, 0UL),
            (edit.NewFiles[0].Level, edit.NewFiles[0].File.Number, edit.NewFiles[0].File.FileSize, edit.NewFiles[0].File.SmallestSeqno, edit.NewFiles[0].File.LargestSeqno));
        Assert.Equal((2, 8UL, 3UL, 4UL), (edit.NewFiles[1].Level, edit.NewFiles[1].File.Number, edit.NewFiles[1].File.SmallestSeqno, edit.NewFiles[1].File.LargestSeqno));
        Assert.Equal((9UL, 1u, 300UL), (edit.NewFiles[2].File.Number, edit.NewFiles[2].File.PathId, edit.NewFiles[2].File.FileSize));
        Assert.Equal(large, edit.NewFiles[2].File.Largest);
    }

    [Fact]
    public void LegacyWalRecordsDecode()
    {
        // WalAddition 8196 and WalDeletion 8197 carry their bodies without a length prefix.
        byte[] bytes = { 0x84, 0x40, 5, 2, 0x80, 0x01, 1, 0x85, 0x40, 4 };
        VersionEdit edit = VersionEdit.Decode(bytes);
        Assert.Equal(new WalAddition(5, 128), edit.WalAdditions.Single());
        Assert.Equal(4UL, edit.WalDeletionBefore);
        Assert.Throws<KvCorruptionException>(() => VersionEdit.Decode(new byte[] { 0x84, 0x40, 5, 3, 0, 1 }));
    }

    /// <summary>
    /// KvEngine's record of WALs it created: tag 12289 (the safe-to-ignore bit set, so RocksDB
    /// skips it), a length-prefixed run of varint64 numbers.
    /// </summary>
    [Fact]
    public void CreatedWalsRoundTripUnderASafeToIgnoreTag()
    {
        var edit = new VersionEdit();
        edit.AddCreatedWal(7);
        edit.AddCreatedWal(300);
        byte[] bytes = Encode(edit);
        Assert.Equal(new byte[] { 0x81, 0x60, 3, 7, 0xAC, 0x02 }, bytes);
        Assert.NotEqual(0u, 12289u & (uint)VersionEditTag.SafeIgnoreMask);
        Assert.Equal(new ulong[] { 7, 300 }, VersionEdit.Decode(bytes).CreatedWals);
        Assert.Throws<KvCorruptionException>(() => VersionEdit.Decode(new byte[] { 0x81, 0x60, 2, 0x80, 0x80 }));
    }

    [Fact]
    public void UnknownSafeTagIsSkipped()
    {
        using var buffer = new ByteBuffer();
        buffer.AppendVarint32(2); buffer.AppendVarint64(9);            // LogNumber 9
        buffer.AppendVarint32((1 << 13) + 77);                         // unknown, ignorable
        buffer.AppendLengthPrefixed(new byte[] { 1, 2, 3, 4, 5 });
        buffer.AppendVarint32(4); buffer.AppendVarint64(33);           // LastSequence 33
        VersionEdit edit = VersionEdit.Decode(buffer.WrittenSpan);
        Assert.Equal(9UL, edit.LogNumber);
        Assert.Equal(33UL, edit.LastSequence);
    }

    [Theory]
    [InlineData(8u)]       // was LevelDB's large value refs
    [InlineData(104u)]
    [InlineData(8000u)]
    [InlineData(1u << 14)] // the safe-ignore bit is 1 << 13 only
    public void UnknownTagWithoutTheSafeBitIsCorruption(uint tag)
    {
        using var buffer = new ByteBuffer();
        buffer.AppendVarint32(tag);
        buffer.AppendLengthPrefixed(new byte[] { 1 });
        Assert.Throws<KvCorruptionException>(() => VersionEdit.Decode(buffer.WrittenSpan));
    }

    [Fact]
    public void SafeTagWithOverlongLengthIsCorruption()
    {
        using var buffer = new ByteBuffer();
        buffer.AppendVarint32((1 << 13) + 77);
        buffer.AppendVarint32(10);
        buffer.Append(new byte[3]);
        Assert.Throws<KvCorruptionException>(() => VersionEdit.Decode(buffer.WrittenSpan));
    }

    // A NewFile4 whose custom fields are the given (tag, value) pairs.
    private static byte[] NewFile4With(params (uint Tag, byte[] Value)[] fields)
    {
        using var buffer = new ByteBuffer();
        buffer.AppendVarint32(103);
        buffer.AppendVarint32(0); buffer.AppendVarint64(5); buffer.AppendVarint64(10);
        buffer.AppendLengthPrefixed(Key("a", 1, ValueType.Value));
        buffer.AppendLengthPrefixed(Key("b", 2, ValueType.Value));
        buffer.AppendVarint64(1); buffer.AppendVarint64(2);
        foreach ((uint tag, byte[] value) in fields)
        {
            buffer.AppendVarint32(tag);
            buffer.AppendLengthPrefixed(value);
        }
        buffer.AppendVarint32(1);
        return buffer.WrittenSpan.ToArray();
    }

    [Fact]
    public void UnknownIgnorableCustomFieldIsSkipped()
    {
        VersionEdit edit = VersionEdit.Decode(NewFile4With((20, new byte[] { 9, 9 }), (10, new byte[] { 1 }), (5, new byte[] { 7 })));
        Assert.Equal(7UL, edit.NewFiles.Single().File.OldestAncesterTime);
    }

    [Theory]
    [InlineData(66u)]
    [InlineData(64u + 20)]
    public void UnknownCustomFieldThatMustBeUnderstoodIsCorruption(uint tag)
    {
        Assert.Throws<KvCorruptionException>(() => VersionEdit.Decode(NewFile4With((tag, new byte[] { 1 }))));
    }

    [Fact]
    public void MalformedCustomFieldsAreCorruption()
    {
        Assert.Throws<KvCorruptionException>(() => VersionEdit.Decode(NewFile4With((65, new byte[] { 4 }))));   // path id > 3
        Assert.Throws<KvCorruptionException>(() => VersionEdit.Decode(NewFile4With((65, new byte[] { 1, 1 })))); // path id size
        Assert.Throws<KvCorruptionException>(() => VersionEdit.Decode(NewFile4With((12, new byte[15]))));       // unique id size
        Assert.Throws<KvCorruptionException>(() => VersionEdit.Decode(NewFile4With((2, new byte[2]))));         // need compaction size
        Assert.Throws<KvCorruptionException>(() => VersionEdit.Decode(NewFile4With((3, new byte[7]))));         // min log hack
        Assert.Throws<KvCorruptionException>(() => VersionEdit.Decode(NewFile4With((5, new byte[] { 0x80 }))));  // varint
        Assert.Throws<KvCorruptionException>(() => VersionEdit.Decode(NewFile4With((8, new byte[] { 0xFF }))));  // not UTF-8
        Assert.Equal(3u, VersionEdit.Decode(NewFile4With((65, new byte[] { 3 }))).NewFiles[0].File.PathId);
        VersionEdit hack = VersionEdit.Decode(NewFile4With((3, new byte[] { 9, 0, 0, 0, 0, 0, 0, 0 })));
        Assert.Equal(9UL, hack.MinLogNumberToKeep);
    }

    [Fact]
    public void ShortInternalKeyIsCorruption()
    {
        using var buffer = new ByteBuffer();
        buffer.AppendVarint32(5); // CompactCursor
        buffer.AppendVarint32(1);
        buffer.AppendLengthPrefixed(new byte[7]);
        Assert.Throws<KvCorruptionException>(() => VersionEdit.Decode(buffer.WrittenSpan));
    }

    [Fact]
    public void EveryTruncationInsideAFileRecordIsCorruption()
    {
        var edit = new VersionEdit();
        edit.AddFile(1, File(100, "a", "m"));
        byte[] bytes = Encode(edit);
        for (int n = 1; n < bytes.Length; n++)
        {
            byte[] cut = bytes[..n];
            Assert.Throws<KvCorruptionException>(() => VersionEdit.Decode(cut));
        }
    }

    [Fact]
    public void TruncationsOfAFullEditDecodeOrAreCorruption()
    {
        byte[] bytes = Encode(FullEdit());
        int decoded = 0;
        for (int n = 0; n < bytes.Length; n++)
        {
            try
            {
                VersionEdit.Decode(bytes.AsSpan(0, n));
                decoded++;
            }
            catch (KvCorruptionException)
            {
                // expected for most cuts
            }
        }
        // Cuts at field boundaries are valid shorter edits: one per field before the first file
        // record at least (empty, DbId, Comparator, LogNumber, ...).
        Assert.InRange(decoded, 8, 40);
    }

    [Fact]
    public void RandomBytesOnlyDecodeOrRaiseCorruption()
    {
        var random = new Random(99);
        byte[] valid = Encode(FullEdit());
        for (int i = 0; i < 3000; i++)
        {
            byte[] bytes = (byte[])valid.Clone();
            for (int flips = random.Next(1, 4); flips > 0; flips--)
            {
                bytes[random.Next(bytes.Length)] = (byte)random.Next(256);
            }
            try
            {
                VersionEdit.Decode(bytes);
            }
            catch (KvCorruptionException)
            {
                // acceptable
            }
        }
    }

    [Fact]
    public void InvalidArgumentsAreRejected()
    {
        var edit = new VersionEdit();
        Assert.Throws<ArgumentException>(() => edit.AddFile(0, new FileMetaData { Smallest = new byte[3], Largest = new byte[8] }));
        Assert.Throws<ArgumentException>(() => edit.AddFile(0, new FileMetaData { Smallest = new byte[8], Largest = new byte[8], PathId = 4 }));
        Assert.Throws<ArgumentOutOfRangeException>(() => edit.AddFile(-1, File(1, "a", "b")));
        Assert.Throws<ArgumentOutOfRangeException>(() => edit.DeleteFile(-1, 1));
        edit.DeleteFile(1, 5);
        edit.DeleteFile(1, 5);
        Assert.Single(edit.DeletedFiles);
        edit.FullHistoryTsLow = Array.Empty<byte>();
        Assert.Throws<InvalidOperationException>(() => Encode(edit));
    }
}
