using System.Buffers.Binary;
using System.Text;
using KvEngine.Tests.Db;

namespace KvEngine.Tests.Merge;

/// <summary>The merge operator is a column family's option: each family merges with its own, and one without refuses merges.</summary>
public class ColumnFamilyMergeTests
{
    private static byte[] B(string s) => Encoding.UTF8.GetBytes(s);

    private static byte[] U64(ulong v)
    {
        var b = new byte[8];
        BinaryPrimitives.WriteUInt64LittleEndian(b, v);
        return b;
    }

    [Fact]
    public void EachFamilyMergesWithItsOwnOperatorAcrossFlushAndReopen()
    {
        var fs = DbTestUtil.NewFs();
        KvOptions options = DbTestUtil.SmallOptions(fs);
        options.MergeOperator = new UInt64AddOperator();
        options.CreateMissingColumnFamilies = true;
        ColumnFamilyDescriptor[] families =
        [
            new("text", new ColumnFamilyOptions { MergeOperator = new StringAppendOperator((byte)'|') }),
            new("plain"),
        ];
        using (KvDb db = KvDb.Open(DbTestUtil.DbPath, options, DbTestUtil.WithDefault(options, families)))
        {
            ColumnFamilyHandle text = db.GetColumnFamily("text")!;
            ColumnFamilyHandle plain = db.GetColumnFamily("plain")!;
            using var batch = new WriteBatch();
            batch.Merge(B("k"), U64(2));
            batch.Merge(text, B("k"), B("a"));
            batch.Put(plain, B("k"), B("p"));
            db.Write(batch);
            db.Flush(text);
            db.Merge(B("k"), U64(3));
            db.Merge(text, B("k"), B("b"));
            Assert.Throws<InvalidOperationException>(() => db.Merge(plain, B("k"), B("x")));
            using var mixed = new WriteBatch();
            mixed.Put(B("other"), B("v"));
            mixed.Merge(plain, B("k"), B("x"));
            Assert.Throws<InvalidOperationException>(() => db.Write(mixed));
            Assert.Null(db.Get(B("other"))); // the refused batch wrote nothing
        }
        using (KvDb db = KvDb.Open(DbTestUtil.DbPath, options, DbTestUtil.WithDefault(options, families)))
        {
            Assert.Equal(5UL, BinaryPrimitives.ReadUInt64LittleEndian(db.Get(B("k"))));
            Assert.Equal("a|b", Encoding.UTF8.GetString(db.Get(db.GetColumnFamily("text")!, B("k"))!));
            Assert.Equal("p", Encoding.UTF8.GetString(db.Get(db.GetColumnFamily("plain")!, B("k"))!));
        }
        // Reopened without the text family's operator: its WAL or tables hold operands, so it is refused.
        ColumnFamilyDescriptor[] withoutOperator = [new("text"), new("plain")];
        Assert.ThrowsAny<KvException>(() =>
        {
            using KvDb db = KvDb.Open(DbTestUtil.DbPath, options, DbTestUtil.WithDefault(options, withoutOperator));
            db.Get(db.GetColumnFamily("text")!, B("k"));
        });
    }
}
