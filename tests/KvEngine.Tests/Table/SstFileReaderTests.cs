using System.Text;

namespace KvEngine.Tests.Table;

/// <summary>
/// SstFileReader, the public reader of one table: what SstFileWriter wrote comes back entry by
/// entry with sequence and type, Seek/Prev position as documented, properties and range deletions
/// are read, and damage and misuse raise typed exceptions.
/// </summary>
public sealed class SstFileReaderTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-sstreader-");

    public void Dispose() => _dir.Delete(recursive: true);

    private string Write(string name)
    {
        string path = Path.Combine(_dir.FullName, name);
        using var writer = new SstFileWriter();
        writer.Open(path);
        for (char c = 'a'; c <= 'z'; c++)
        {
            if (c == 'd')
            {
                writer.Delete("d"u8);
            }
            else if (c == 'm')
            {
                writer.Merge("m"u8, "operand"u8);
            }
            else
            {
                writer.Put([(byte)c], Encoding.ASCII.GetBytes("value-" + c));
            }
        }
        writer.DeleteRange("p"u8, "r"u8);
        writer.Finish();
        return path;
    }

    [Fact]
    public void Iterator_ReturnsEveryStoredEntryWithSequenceAndType()
    {
        using var reader = new SstFileReader();
        reader.Open(Write("a.sst"));
        var seen = new List<string>();
        using (SstFileIterator it = reader.NewIterator())
        {
            for (it.SeekToFirst(); it.Valid; it.Next())
            {
                Assert.Equal(0UL, it.Sequence);
                seen.Add($"{Encoding.ASCII.GetString(it.Key)}:{it.EntryType}:{Encoding.ASCII.GetString(it.Value)}");
            }
        }
        Assert.Equal(26, seen.Count);
        Assert.Equal("a:Value:value-a", seen[0]);
        Assert.Equal("d:Deletion:", seen[3]);
        Assert.Equal("m:Merge:operand", seen[12]);

        using (SstFileIterator it = reader.NewIterator())
        {
            it.Seek("l5"u8);
            Assert.Equal("m", Encoding.ASCII.GetString(it.Key));
            it.Prev();
            Assert.Equal("l", Encoding.ASCII.GetString(it.Key));
            it.SeekToLast();
            Assert.Equal("z", Encoding.ASCII.GetString(it.Key));
            it.Seek("zz"u8);
            Assert.False(it.Valid);
            Assert.Throws<InvalidOperationException>(() => it.Next());
        }

        KvTableProperties properties = reader.GetTableProperties();
        Assert.Equal(27UL, properties.NumEntries); // RocksDB counts the range deletion too
        Assert.Equal(2UL, properties.NumDeletions); // the point deletion and the range deletion
        Assert.Equal(1UL, properties.NumMergeOperands);
        Assert.Equal(1UL, properties.NumRangeDeletions);
        Assert.True(properties.UserCollectedProperties.ContainsKey("rocksdb.external_sst_file.version"));
        Assert.Equal(5, reader.FormatVersion);

        SstRangeTombstone tombstone = Assert.Single(reader.GetRangeTombstones());
        Assert.Equal("p", Encoding.ASCII.GetString(tombstone.Begin.Span));
        Assert.Equal("r", Encoding.ASCII.GetString(tombstone.End.Span));
        reader.VerifyChecksum();
    }

    [Fact]
    public void DamageAndMisuse_RaiseTypedExceptions()
    {
        string path = Write("b.sst");
        byte[] bytes = File.ReadAllBytes(path);
        bytes[10] ^= 0x20; // inside the data block
        string damaged = Path.Combine(_dir.FullName, "damaged.sst");
        File.WriteAllBytes(damaged, bytes);
        using (var reader = new SstFileReader())
        {
            reader.Open(damaged);
            Assert.Throws<KvCorruptionException>(reader.VerifyChecksum);
            using SstFileIterator it = reader.NewIterator();
            Assert.Throws<KvCorruptionException>(it.SeekToFirst);
        }

        string text = Path.Combine(_dir.FullName, "text.sst");
        File.WriteAllText(text, new string('x', 200));
        using (var reader = new SstFileReader())
        {
            Assert.Throws<KvCorruptionException>(() => reader.Open(text));
        }

        var fresh = new SstFileReader();
        Assert.Throws<InvalidOperationException>(() => fresh.NewIterator());
        Assert.Throws<FileNotFoundException>(() => fresh.Open(Path.Combine(_dir.FullName, "missing.sst")));
        fresh.Open(path);
        Assert.Throws<InvalidOperationException>(() => fresh.Open(path));
        fresh.Dispose();
        Assert.Throws<ObjectDisposedException>(fresh.GetTableProperties);
    }
}
