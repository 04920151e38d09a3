using System.Text;
using KvEngine.Util;
using KvEngine.Wal;
using static KvEngine.Tests.Wal.RecordingBatchHandler;

namespace KvEngine.Tests.Wal;

public class WriteBatchTests
{
    private static byte[] B(string s) => Encoding.UTF8.GetBytes(s);

    private static List<string> Decode(ReadOnlySpan<byte> rep)
    {
        var handler = new RecordingBatchHandler();
        WriteBatchDecoder.Iterate(rep, ref handler);
        return handler.Operations;
    }

    private static byte[] Rep(ulong sequence, uint count, params byte[][] records)
    {
        using var buffer = new ByteBuffer();
        buffer.AppendFixed64(sequence);
        buffer.AppendFixed32(count);
        foreach (byte[] r in records)
        {
            buffer.Append(r);
        }
        return buffer.WrittenSpan.ToArray();
    }

    private static byte[] Record(byte tag, params byte[][] parts) => Record(tag, null, parts);

    private static byte[] Record(byte tag, uint? columnFamily, params byte[][] parts)
    {
        using var buffer = new ByteBuffer();
        buffer.AppendByte(tag);
        if (columnFamily.HasValue)
        {
            buffer.AppendVarint32(columnFamily.Value);
        }
        foreach (byte[] p in parts)
        {
            buffer.AppendLengthPrefixed(p);
        }
        return buffer.WrittenSpan.ToArray();
    }

    [Fact]
    public void EmptyBatchIsAZeroHeader()
    {
        using var batch = new WriteBatch();
        Assert.Equal(0, batch.Count);
        Assert.Equal(12, batch.ApproximateSize);
        Assert.Equal(new byte[12], batch.Data.ToArray());
        Assert.Equal(0, WriteBatchDecoder.Validate(batch.Data));
    }

    [Fact]
    public void EncodingMatchesWhatRocksDbWrote()
    {
        // Payload of the first record of a WAL written by RocksDB 7.8's `ldb query` (put a 1).
        byte[] rocksdb = Convert.FromHexString("0200000000000000" + "01000000" + "01016101" + "31");
        using var batch = new WriteBatch();
        batch.Put(B("a"), B("1"));
        batch.Sequence = 2;
        Assert.Equal(rocksdb, batch.Data.ToArray());

        // delete a, sequence 4
        using var delete = new WriteBatch();
        delete.Delete(B("a"));
        delete.Sequence = 4;
        Assert.Equal(Convert.FromHexString("0400000000000000" + "01000000" + "000161"), delete.Data.ToArray());
    }

    [Fact]
    public void EveryOperationRoundTrips()
    {
        using var batch = new WriteBatch();
        batch.Put(B("k1"), B("v1"));
        batch.Delete(B("k2"));
        batch.SingleDelete(B("k3"));
        batch.DeleteRange(B("a"), B("c"));
        batch.Merge(B("k4"), B("+1"));
        batch.Put(ReadOnlySpan<byte>.Empty, ReadOnlySpan<byte>.Empty);
        batch.Put(B("big"), new byte[100_000]);
        Assert.Equal(7, batch.Count);

        var handler = new RecordingBatchHandler();
        batch.Iterate(ref handler);
        Assert.Equal(
            new[]
            {
                $"PUT {Hex("k1")} {Hex("v1")}", $"DEL {Hex("k2")}", $"SDEL {Hex("k3")}",
                $"DELRANGE {Hex("a")} {Hex("c")}", $"MERGE {Hex("k4")} {Hex("+1")}", "PUT  ",
                $"PUT {Hex("big")} {new string('0', 200_000)}",
            },
            handler.Operations);

        using WriteBatch copy = WriteBatch.FromRep(batch.Data);
        Assert.Equal(batch.Data.ToArray(), copy.Data.ToArray());
        Assert.Equal(7, copy.Count);
        Assert.Equal(batch.ApproximateSize, copy.ApproximateSize);
    }

    [Fact]
    public void SequenceIsPatchedInTheHeader()
    {
        using var batch = new WriteBatch();
        batch.Put(B("k"), B("v"));
        byte[] before = batch.Data.ToArray();
        batch.Sequence = 0x0102030405060708;
        Assert.Equal(0x0102030405060708UL, batch.Sequence);
        Assert.Equal(new byte[] { 8, 7, 6, 5, 4, 3, 2, 1 }, batch.Data[..8].ToArray());
        Assert.Equal(before[8..], batch.Data[8..].ToArray());
    }

    [Fact]
    public void ClearEmptiesTheBatchForReuse()
    {
        using var batch = new WriteBatch();
        batch.Put(B("k"), B("v"));
        batch.Sequence = 9;
        batch.Clear();
        Assert.Equal(0, batch.Count);
        Assert.Equal(0UL, batch.Sequence);
        Assert.Equal(12, batch.ApproximateSize);
        batch.Delete(B("x"));
        Assert.Equal(new[] { $"DEL {Hex("x")}" }, Decode(batch.Data));
    }

    [Fact]
    public void AppendConcatenatesRecordsAndCounts()
    {
        using var a = new WriteBatch();
        a.Put(B("a"), B("1"));
        a.Sequence = 100;
        using var b = new WriteBatch();
        b.Delete(B("b"));
        b.Merge(B("c"), B("2"));
        b.Sequence = 555;
        a.Append(b);
        Assert.Equal(3, a.Count);
        Assert.Equal(100UL, a.Sequence);
        Assert.Equal(new[] { $"PUT {Hex("a")} {Hex("1")}", $"DEL {Hex("b")}", $"MERGE {Hex("c")} {Hex("2")}" }, Decode(a.Data));
        Assert.Equal(2, b.Count);
        Assert.Throws<ArgumentException>(() => a.Append(a));
    }

    [Fact]
    public void OversizedBatchIsRejectedAndLeftIntact()
    {
        using var batch = new WriteBatch(16, maxRepresentationSize: 100);
        batch.Put(B("k"), new byte[50]);
        Assert.Throws<ArgumentException>(() => batch.Put(B("k2"), new byte[50]));
        Assert.Equal(1, batch.Count);
        Assert.Equal(1, WriteBatchDecoder.Validate(batch.Data));
    }

    [Fact]
    public void DisposedBatchThrows()
    {
        var batch = new WriteBatch();
        batch.Dispose();
        Assert.Throws<ObjectDisposedException>(() => batch.Put(B("k"), B("v")));
        Assert.Throws<ObjectDisposedException>(() => batch.Count);
        batch.Dispose();
    }

    [Fact]
    public void ShortHeaderIsCorruption()
    {
        for (int n = 0; n < 12; n++)
        {
            Assert.Throws<KvCorruptionException>(() => WriteBatch.FromRep(new byte[n]));
        }
    }

    [Fact]
    public void WrongCountIsCorruption()
    {
        byte[] put = Record(0x1, B("k"), B("v"));
        Assert.Throws<KvCorruptionException>(() => WriteBatchDecoder.Validate(Rep(1, 2, put)));
        Assert.Throws<KvCorruptionException>(() => WriteBatchDecoder.Validate(Rep(1, 0, put)));
        Assert.Throws<KvCorruptionException>(() => WriteBatchDecoder.Validate(Rep(1, 1)));
        Assert.Equal(1, WriteBatchDecoder.Validate(Rep(1, 1, put)));
    }

    [Fact]
    public void TruncationAtEveryOffsetIsCorruption()
    {
        using var batch = new WriteBatch();
        batch.Put(B("key1"), B("value1"));
        batch.DeleteRange(B("a"), B("b"));
        batch.Merge(B("m"), new byte[300]);
        batch.Delete(B("d"));
        byte[] rep = batch.Data.ToArray();
        for (int n = 0; n < rep.Length; n++)
        {
            byte[] cut = rep[..n];
            Assert.Throws<KvCorruptionException>(() => WriteBatch.FromRep(cut));
        }
    }

    [Theory]
    [InlineData(0x14)] // DeletionWithTimestamp: never a WAL tag
    [InlineData(0x18)]
    [InlineData(0x20)]
    [InlineData(0xFF)]
    public void UnknownTagIsCorruption(byte tag)
    {
        byte[] rep = Rep(1, 1, Record(tag, B("k"), B("v")));
        var e = Assert.Throws<KvCorruptionException>(() => WriteBatchDecoder.Validate(rep));
        Assert.Contains("tag", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void ColumnFamilyVariantsForTheDefaultFamilyDecode()
    {
        byte[] rep = Rep(
            7,
            5,
            Record(0x5, 0, B("k"), B("v")),
            Record(0x4, 0, B("d")),
            Record(0x8, 0, B("s")),
            Record(0xE, 0, B("a"), B("z")),
            Record(0x6, 0, B("m"), B("o")));
        Assert.Equal(
            new[] { $"PUT {Hex("k")} {Hex("v")}", $"DEL {Hex("d")}", $"SDEL {Hex("s")}", $"DELRANGE {Hex("a")} {Hex("z")}", $"MERGE {Hex("m")} {Hex("o")}" },
            Decode(rep));
    }

    [Theory]
    [InlineData(0x5)]
    [InlineData(0x4)]
    [InlineData(0x6)]
    [InlineData(0x8)]
    [InlineData(0xE)]
    public void OtherColumnFamilyRecordsReachTheHandlerAfterTheirFamily(byte tag)
    {
        byte[][] parts = tag is 0x4 or 0x8 ? new[] { B("k") } : new[] { B("k"), B("v") };
        byte[] rep = Rep(1, 2, Record(tag, 3, parts), Record(0x1, B("d"), B("x")));
        Assert.Equal(2, WriteBatchDecoder.Validate(rep));
        List<string> ops = Decode(rep);
        Assert.Equal(2, ops.Count);
        Assert.StartsWith("@3 ", ops[0], StringComparison.Ordinal);
        Assert.Equal($"PUT {Hex("d")} {Hex("x")}", ops[1]);
    }

    [Fact]
    public void FamilyOverloadsWriteTheColumnFamilyTags()
    {
        using var batch = new WriteBatch();
        batch.Put(B("a"), B("1"));
        var fs = Db.DbTestUtil.NewFs();
        using (KvDb db = KvDb.Open(Db.DbTestUtil.DbPath, Db.DbTestUtil.SmallOptions(fs)))
        {
            ColumnFamilyHandle cf = db.CreateColumnFamily("cf");
            batch.Put(cf, B("b"), B("2"));
            batch.Delete(cf, B("c"));
            batch.DeleteRange(cf, B("d"), B("e"));
            db.Write(batch);
            Assert.Equal(B("2"), db.Get(cf, B("b")));
            Assert.Null(db.Get(B("b")));
        }
        Assert.Equal(new[]
        {
            $"PUT {Hex("a")} {Hex("1")}",
            $"@{1} PUT {Hex("b")} {Hex("2")}",
            $"@{1} DEL {Hex("c")}",
            $"@{1} DELRANGE {Hex("d")} {Hex("e")}",
        }, Decode(batch.Data.ToArray()));
    }

    [Fact]
    public void LogDataAndNoopAreSkippedAndNotCounted()
    {
        byte[] rep = Rep(1, 1, new byte[] { 0xD }, Record(0x3, B("blob")), Record(0x1, B("k"), B("v")));
        Assert.Equal(new[] { $"PUT {Hex("k")} {Hex("v")}" }, Decode(rep));
    }

    [Theory]
    [InlineData(0x9)]
    [InlineData(0x12)]
    [InlineData(0x13)]
    public void TwoPhaseCommitMarkersAreUnsupported(byte tag)
    {
        byte[] rep = Rep(1, 0, new[] { tag });
        var e = Assert.Throws<KvNotSupportedException>(() => WriteBatchDecoder.Validate(rep));
        Assert.Contains("two-phase", e.Message, StringComparison.Ordinal);
        Assert.Throws<KvNotSupportedException>(() => WriteBatchDecoder.Validate(Rep(1, 0, Record(0xA, B("xid")))));
        Assert.Throws<KvNotSupportedException>(() => WriteBatchDecoder.Validate(Rep(1, 0, Record(0xB, B("xid")))));
        Assert.Throws<KvNotSupportedException>(() => WriteBatchDecoder.Validate(Rep(1, 0, Record(0xC, B("xid")))));
        Assert.Throws<KvNotSupportedException>(() => WriteBatchDecoder.Validate(Rep(1, 0, Record(0x15, B("ts"), B("xid")))));
        Assert.Throws<KvCorruptionException>(() => WriteBatchDecoder.Validate(Rep(1, 0, new byte[] { 0xB })));
    }

    [Fact]
    public void BlobIndexAndWideColumnsAreUnsupported()
    {
        Assert.IsNotType<KvCorruptionException>(
            Assert.Throws<KvNotSupportedException>(() => WriteBatchDecoder.Validate(Rep(1, 1, Record(0x11, B("k"), B("idx"))))));
        Assert.IsNotType<KvCorruptionException>(
            Assert.Throws<KvNotSupportedException>(() => WriteBatchDecoder.Validate(Rep(1, 1, Record(0x16, B("k"), B("e"))))));
        Assert.Throws<KvCorruptionException>(() => WriteBatchDecoder.Validate(Rep(1, 1, new byte[] { 0x16, 1 })));
    }

    [Fact]
    public void RandomBytesNeverEscapeAsOtherExceptions()
    {
        var random = new Random(1234);
        for (int i = 0; i < 3000; i++)
        {
            byte[] body = new byte[random.Next(0, 40)];
            random.NextBytes(body);
            // Bias toward known tags and short lengths so that decoding gets past the first record.
            for (int j = 0; j < body.Length; j++)
            {
                if (random.Next(3) == 0)
                {
                    body[j] = (byte)random.Next(0, 0x18);
                }
            }
            byte[] rep = Rep(1, (uint)random.Next(0, 4), body);
            try
            {
                WriteBatchDecoder.Validate(rep);
            }
            catch (KvException)
            {
                // Corruption or unsupported: both are acceptable outcomes.
            }
        }
    }

    [Fact]
    public void Data_and_FromData_round_trip_a_batch_and_refuse_malformed_bytes()
    {
        using var batch = new WriteBatch();
        batch.Put(B("a"), B("1"));
        batch.Delete(B("b"));
        batch.DeleteRange(B("c"), B("d"));
        byte[] data = batch.Data.ToArray();
        using WriteBatch copy = WriteBatch.FromData(data);
        Assert.Equal(3, copy.Count);
        Assert.Equal(data, copy.Data.ToArray());
        Assert.Equal(Decode(data), Decode(copy.Data));
        Assert.Throws<KvCorruptionException>(() => WriteBatch.FromData(data.AsSpan(0, 11)));
        Assert.Throws<KvCorruptionException>(() => WriteBatch.FromData(data.AsSpan(0, data.Length - 1)));
    }
}
