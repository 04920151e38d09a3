using KvEngine.Db.State;
using Xunit;

namespace KvEngine.Tests.Db;

/// <summary>
/// With max_open_files = -1 an open loads every live table's reader (RocksDB's LoadTableHandlers),
/// so the first reads pay for data blocks only; with a bound, readers open on first use.
/// </summary>
public sealed class TableReaderPreloadTests : IDisposable
{
    private readonly string _dir = Path.Combine(Path.GetTempPath(), "kv-preload-" + Guid.NewGuid().ToString("N"));

    public void Dispose()
    {
        if (Directory.Exists(_dir))
        {
            Directory.Delete(_dir, recursive: true);
        }
    }

    [Theory]
    [InlineData(-1, true)]
    [InlineData(100, false)]
    public void AnOpenLoadsEveryTableReaderOnlyWhenAllFilesStayOpen(int maxOpenFiles, bool preloaded)
    {
        var options = new KvOptions { DisableAutoCompactions = true };
        using (KvDb db = KvDb.Open(_dir, options))
        {
            for (int t = 0; t < 3; t++)
            {
                db.Put(DbTestUtil.B($"k{t}"), DbTestUtil.B($"v{t}"));
                db.Flush();
            }
        }

        using (KvDb db = KvDb.Open(_dir, new KvOptions { DisableAutoCompactions = true, MaxOpenFiles = maxOpenFiles }))
        {
            ColumnFamilyData cfd = db.Impl.LiveFamilies()[0];
            Assert.Equal(preloaded ? 3 : 0, cfd.Tables.Count);
            Assert.Equal("v1", DbTestUtil.S(db.Get(DbTestUtil.B("k1"))!));
        }
    }

    [Fact]
    public void ADamagedTableFailsThePreloadingOpenUnlessParanoidChecksAreOff()
    {
        using (KvDb db = KvDb.Open(_dir, new KvOptions { DisableAutoCompactions = true }))
        {
            db.Put(DbTestUtil.B("a"), DbTestUtil.B("1"));
            db.Flush();
        }
        string table = Directory.GetFiles(_dir, "*.sst").Single();
        byte[] bytes = File.ReadAllBytes(table);
        bytes.AsSpan(bytes.Length - 48, 48).Clear(); // the footer (its length stays what the MANIFEST says)
        File.WriteAllBytes(table, bytes);

        KvCorruptionException e = Assert.Throws<KvCorruptionException>(() => KvDb.Open(_dir, new KvOptions { DisableAutoCompactions = true }).Dispose());
        Assert.Contains(Path.GetFileName(table), e.Message, StringComparison.Ordinal);

        using KvDb lax = KvDb.Open(_dir, new KvOptions { DisableAutoCompactions = true, ParanoidChecks = false });
        Assert.Throws<KvCorruptionException>(() => lax.Get(DbTestUtil.B("a")));
    }
}
