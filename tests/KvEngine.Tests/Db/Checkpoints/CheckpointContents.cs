namespace KvEngine.Tests.Db.Checkpoints;

/// <summary>
/// Whole-database contents of the checkpoint tests: every family's keys and values (a full scan,
/// keys and values as UTF-8 strings), by family name.
/// </summary>
internal static class CheckpointContents
{
    public static SortedDictionary<string, SortedDictionary<string, string>> Read(KvDb db)
    {
        var result = new SortedDictionary<string, SortedDictionary<string, string>>(StringComparer.Ordinal);
        foreach (ColumnFamilyHandle h in db.ColumnFamilies)
        {
            result[h.Name] = ReadFamily(db, h);
        }
        return result;
    }

    public static SortedDictionary<string, string> ReadFamily(KvDb db, ColumnFamilyHandle family, ReadOptions? options = null)
    {
        var result = new SortedDictionary<string, string>(StringComparer.Ordinal);
        using KvIterator it = db.NewIterator(family, options);
        for (it.SeekToFirst(); it.Valid; it.Next())
        {
            result.Add(DbTestUtil.S(it.Key), DbTestUtil.S(it.Value));
        }
        return result;
    }

    /// <summary>Descriptors for every family of the database at <paramref name="path"/> but default, with <paramref name="options"/>.</summary>
    public static List<ColumnFamilyDescriptor> Descriptors(string path, KvOptions fsOptions, Func<ColumnFamilyOptions> options) =>
        KvDb.ListColumnFamilies(path, fsOptions).Skip(1).Select(n => new ColumnFamilyDescriptor(n, options())).ToList();

    public static void AssertEqual(SortedDictionary<string, SortedDictionary<string, string>> expected,
        SortedDictionary<string, SortedDictionary<string, string>> actual)
    {
        Assert.Equal(expected.Keys, actual.Keys);
        foreach ((string family, SortedDictionary<string, string> rows) in expected)
        {
            Assert.Equal(rows, actual[family]);
        }
    }
}
