namespace KvEngine.Tests.Wal;

/// <summary>
/// WalFileReader, the public reader of one WAL: every write of every batch, with its family,
/// sequence, count and offset; a torn tail ends the file quietly, damage before it is corruption.
/// </summary>
public sealed class WalFileReaderTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-walreader-");

    public void Dispose() => _dir.Delete(recursive: true);

    private string WriteLog()
    {
        string db = Path.Combine(_dir.FullName, "db");
        using KvDb kv = KvDb.Open(db, new KvOptions { MergeOperator = new StringAppendOperator() });
        using ColumnFamilyHandle other = kv.CreateColumnFamily("other", new ColumnFamilyOptions { MergeOperator = new StringAppendOperator() });
        using (var batch = new WriteBatch())
        {
            batch.Put("k1"u8, "v1"u8);
            batch.Put(other, "k2"u8, "v2"u8);
            batch.Delete("k3"u8);
            kv.Write(batch);
        }
        kv.SingleDelete("k4"u8);
        kv.DeleteRange("a"u8, "b"u8);
        kv.Merge("k5"u8, "m"u8);
        return Directory.GetFiles(db, "*.log").Single(f => new FileInfo(f).Length > 0);
    }

    [Fact]
    public void ReadRecords_ReturnsEveryWriteInOrder()
    {
        List<WalRecordInfo> records = WalFileReader.ReadRecords(WriteLog()).ToList();
        Assert.Equal(4, records.Count);
        Assert.Equal([1UL, 4UL, 5UL, 6UL], records.Select(r => r.Sequence));
        Assert.Equal([3, 1, 1, 1], records.Select(r => r.Count));
        Assert.Equal(0, records[0].Offset);
        Assert.True(records[1].Offset >= records[0].Offset + records[0].ByteSize);
        WalOperation[] first = [.. records[0].Operations];
        Assert.Equal([WalOperationType.Put, WalOperationType.Put, WalOperationType.Delete], first.Select(o => o.Type));
        Assert.Equal([0U, 1U, 0U], first.Select(o => o.ColumnFamily));
        Assert.Equal("v2"u8.ToArray(), first[1].Value.ToArray());
        Assert.Equal(WalOperationType.SingleDelete, records[1].Operations[0].Type);
        Assert.Equal(WalOperationType.DeleteRange, records[2].Operations[0].Type);
        Assert.Equal("b"u8.ToArray(), records[2].Operations[0].Value.ToArray());
        Assert.Equal(WalOperationType.Merge, records[3].Operations[0].Type);
    }

    [Fact]
    public void TornTail_EndsTheFile_DamageBeforeItThrows()
    {
        string log = WriteLog();
        byte[] bytes = File.ReadAllBytes(log);
        string torn = Path.Combine(_dir.FullName, "000100.log");
        File.WriteAllBytes(torn, bytes[..^3]);
        Assert.Equal(3, WalFileReader.ReadRecords(torn).Count());

        bytes[10] ^= 0x01; // the first record's payload
        string damaged = Path.Combine(_dir.FullName, "000101.log");
        File.WriteAllBytes(damaged, bytes);
        Assert.Throws<KvCorruptionException>(() => WalFileReader.ReadRecords(damaged).ToList());
        Assert.Throws<FileNotFoundException>(() => WalFileReader.ReadRecords(Path.Combine(_dir.FullName, "none.log")).ToList());
    }
}
