namespace KvEngine.Tests.Versions;

/// <summary>
/// ManifestInfo, the public reader of a MANIFEST: families, their tables per level and the
/// counters, as the database recorded them; a missing or damaged file raises a typed exception.
/// </summary>
public sealed class ManifestInfoTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-manifestinfo-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Fact]
    public void Read_DescribesFamiliesAndTheirTables()
    {
        string db = Path.Combine(_dir.FullName, "db");
        using (KvDb kv = KvDb.Open(db))
        {
            using ColumnFamilyHandle other = kv.CreateColumnFamily("other");
            kv.Put("a"u8, "1"u8);
            kv.Put("c"u8, "2"u8);
            kv.Flush();
            kv.Put(other, "b"u8, "3"u8);
            kv.Flush(other);
            using ColumnFamilyHandle dropped = kv.CreateColumnFamily("dropped");
            kv.DropColumnFamily(dropped);
        }
        ManifestInfo info = ManifestInfo.Read(db);
        Assert.Equal(["default", "other"], info.ColumnFamilies.Select(f => f.Name));
        Assert.Equal([0U, 1U], info.ColumnFamilies.Select(f => f.Id));
        Assert.Equal(2U, info.MaxColumnFamily);
        Assert.Equal(3UL, info.LastSequence);
        Assert.Equal("leveldb.BytewiseComparator", info.ColumnFamilies[0].ComparatorName);
        ManifestTableInfo table = Assert.Single(info.ColumnFamilies[0].Levels.SelectMany(l => l));
        Assert.Equal("a"u8.ToArray(), table.SmallestKey.ToArray());
        Assert.Equal("c"u8.ToArray(), table.LargestKey.ToArray());
        Assert.Equal((1UL, 2UL), (table.SmallestSequence, table.LargestSequence));
        Assert.Equal(SstEntryType.Value, table.LargestKeyType);
        string file = Path.Combine(db, $"{table.FileNumber:D6}.sst");
        Assert.Equal((ulong)new FileInfo(file).Length, table.FileSize);
        Assert.Single(info.ColumnFamilies[1].Levels[0]);
        Assert.True(info.NextFileNumber > table.FileNumber);
        Assert.Contains(info.Edits, e => e.Contains("ColumnFamilyAdd: dropped", StringComparison.Ordinal));
        Assert.Equal(info.ManifestPath, ManifestInfo.ReadFile(info.ManifestPath).ManifestPath);
    }

    [Fact]
    public void MissingOrDamagedFiles_RaiseTypedExceptions()
    {
        Assert.Throws<FileNotFoundException>(() => ManifestInfo.Read(_dir.FullName));
        Assert.Throws<FileNotFoundException>(() => ManifestInfo.ReadFile(Path.Combine(_dir.FullName, "MANIFEST-000001")));
        string db = Path.Combine(_dir.FullName, "db2");
        using (KvDb kv = KvDb.Open(db))
        {
            kv.Put("a"u8, "1"u8);
        }
        string manifest = Directory.GetFiles(db, "MANIFEST-*").Single();
        byte[] bytes = File.ReadAllBytes(manifest);
        bytes[9] ^= 0x10;
        File.WriteAllBytes(manifest, bytes);
        Assert.Throws<KvCorruptionException>(() => ManifestInfo.Read(db));
    }
}
