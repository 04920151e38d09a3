using System.Buffers;
using System.Text;
using KvEngine.Storage;
using KvEngine.Tests.Compaction;

using static KvEngine.Tests.Compaction.CompactionTestUtil;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Merge;

/// <summary>
/// Merges through a database: what flush and compaction write (full merge at a base or the bottom,
/// partial merge above, operand runs kept when the operator declines, never across a snapshot),
/// the compaction filter on merged values, and the errors: no operator (writes, WAL replay,
/// tables), another operator's tables, a failing or throwing operator.
/// </summary>
public sealed class MergeDbTests
{
    private static (KvDb Db, FaultInjectionFileSystem Fs, KvOptions Options) Open(KvMergeOperator? op, KvCompactionFilter? filter = null)
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory("/m");
        KvOptions o = Tiny(fs, autoCompactions: false);
        o.MergeOperator = op;
        o.CompactionFilter = filter;
        return (KvDb.Open("/m/db", o), fs, o);
    }

    private static string? Str(byte[]? b) => b == null ? null : Encoding.ASCII.GetString(b);

    private static List<(string Key, ulong Seq, ValueType Type)> All(KvDb db, IFileSystem fs) =>
        Enumerable.Range(0, 7).SelectMany(l => Entries(db, fs, l)).ToList();

    [Fact]
    public void FlushAndCompactionMergeOperandsAsRocksDb()
    {
        (KvDb db, FaultInjectionFileSystem fs, _) = Open(new StringAppendOperator());
        using (db)
        {
            db.Put(K("a"), K("base"));
            db.Merge(K("a"), K("1"));
            db.Merge(K("b"), K("1"));
            db.Merge(K("b"), K("2"));
            db.Flush();
            // Flush: a meets its base (one value at the operand's sequence); b has none in the
            // memtable and older data may lie below: partial merge into one operand.
            Assert.Equal([("a", 2UL, ValueType.Value), ("b", 4UL, ValueType.Merge)], All(db, fs));
            Assert.Equal("base,1", Str(db.Get(K("a"))));
            Assert.Equal("1,2", Str(db.Get(K("b"))));

            db.Merge(K("b"), K("3"));
            db.Flush();
            db.CompactRange(null, null);
            // The bottom: nothing older can exist, so b is full-merged without a base.
            Assert.Equal([("a", 0UL, ValueType.Value), ("b", 0UL, ValueType.Value)], All(db, fs));
            Assert.Equal("1,2,3", Str(db.Get(K("b"))));
        }
    }

    [Fact]
    public void CompactionNeverMergesAcrossASnapshot()
    {
        (KvDb db, FaultInjectionFileSystem fs, _) = Open(new StringAppendOperator());
        using (db)
        {
            db.Merge(K("k"), K("1"));
            using Snapshot snap = db.GetSnapshot();
            db.Merge(K("k"), K("2"));
            db.Merge(K("k"), K("3"));
            db.Flush();
            // Newer stripe: 2 and 3 partially merged; the snapshot's stripe: 1 alone (a flush never
            // full-merges without a base: older data may lie below).
            Assert.Equal([("k", 3UL, ValueType.Merge), ("k", 1UL, ValueType.Merge)], All(db, fs));
            db.Put(K("a"), K("v"));
            db.Put(K("z"), K("v"));
            db.Flush(); // overlaps the first file: the compaction rewrites both
            db.CompactRange(null, null);
            // At the bottom: the snapshot's stripe is full-merged (and, seen by every reader, loses
            // its sequence number); the newer stripe stops at the snapshot boundary, where older
            // history still exists, so it stays a (partially merged) operand, as in RocksDB.
            Assert.Equal([("a", 4UL, ValueType.Value), ("k", 3UL, ValueType.Merge), ("k", 0UL, ValueType.Value), ("z", 5UL, ValueType.Value)], All(db, fs));
            Assert.Equal("1", Str(db.Get(K("k"), new ReadOptions { Snapshot = snap })));
            Assert.Equal("1,2,3", Str(db.Get(K("k"))));
            using KvIterator it = db.NewIterator(new ReadOptions { Snapshot = snap });
            it.SeekToLast();
            Assert.Equal("1", Encoding.ASCII.GetString(it.Value));
        }
    }

    [Fact]
    public void OperandRunsStayWhenTheOperatorDeclinesAPartialMerge()
    {
        (KvDb db, FaultInjectionFileSystem fs, _) = Open(new AppendWithoutPartialMerge());
        using (db)
        {
            db.Put(K("k"), K("base"));
            db.Flush();
            db.Impl.CompactLevel(0, 1, null, null);
            db.Impl.CompactLevel(1, 2, null, null); // the base lies below what comes next
            db.Merge(K("k"), K("1"));
            db.Merge(K("k"), K("2"));
            db.Flush();
            db.Impl.CompactLevel(0, 1, null, null);
            Assert.Equal([("k", 3UL, ValueType.Merge), ("k", 2UL, ValueType.Merge)], Entries(db, fs, 1));
            Assert.Equal("base+1+2", Str(db.Get(K("k"))));
            db.CompactRange(null, null);
            Assert.Equal([("k", 0UL, ValueType.Value)], All(db, fs));
            Assert.Equal("base+1+2", Str(db.Get(K("k"))));
        }
    }

    [Fact]
    public void CompactionFilterSeesMergedValues()
    {
        var filter = new PrefixCompactionFilter();
        (KvDb db, FaultInjectionFileSystem fs, _) = Open(new StringAppendOperator(), filter);
        using (db)
        {
            db.Merge(K("gone"), K("x"));
            db.Merge(K("gone"), K("y"));
            db.Merge(K("changed"), K("c"));
            db.Merge(K("changed"), K("d"));
            db.Flush();
            db.Merge(K("gone"), K("z"));
            db.Flush();
            db.CompactRange(null, null);
            Assert.Contains("gone", filter.Seen);
            Assert.Null(db.Get(K("gone"))); // "x,y,z" starts with 'x': removed
            Assert.Equal("C,d", Str(db.Get(K("changed"))));
            Assert.DoesNotContain(All(db, fs), e => e.Key == "gone");
        }
    }

    [Fact]
    public void MergeWithoutAnOperatorIsRefusedBeforeItIsWritten()
    {
        (KvDb db, _, _) = Open(null);
        using (db)
        {
            Assert.Throws<InvalidOperationException>(() => db.Merge(K("k"), K("v")));
            Assert.Throws<InvalidOperationException>(() => { db.MergeAsync(K("k"), K("v")); });
            using var batch = new WriteBatch();
            batch.Put(K("p"), K("v"));
            batch.Merge(K("k"), K("v"));
            Assert.Throws<InvalidOperationException>(() => db.Write(batch));
            Assert.Throws<InvalidOperationException>(() => { db.WriteAsync(batch); });
            batch.Clear();
            batch.Put(K("p"), K("v"));
            db.Write(batch); // a cleared batch has no merge any more
            Assert.Equal("v", Str(db.Get(K("p"))));
            Assert.Null(db.Get(K("k")));
        }
    }

    [Fact]
    public void ReopeningWithoutTheOperatorIsRefused()
    {
        (KvDb db, FaultInjectionFileSystem fs, KvOptions o) = Open(new StringAppendOperator());
        db.Merge(K("k"), K("v"));
        db.Dispose(); // the operand is in the WAL only

        o.MergeOperator = null;
        KvException e = Assert.ThrowsAny<KvException>(() => KvDb.Open("/m/db", o).Dispose());
        Assert.Contains("merge_operator is not properly initialized", e.Message, StringComparison.Ordinal);

        o.MergeOperator = new StringAppendOperator();
        using (KvDb again = KvDb.Open("/m/db", o))
        {
            Assert.Equal("v", Str(again.Get(K("k"))));
            again.Flush(); // now in a table
        }
        foreach (KvMergeOperator? wrong in new KvMergeOperator?[] { null, UInt64AddOperator.Instance })
        {
            o.MergeOperator = wrong;
            using KvDb reopened = KvDb.Open("/m/db", o);
            KvException read = Assert.ThrowsAny<KvException>(() => reopened.Get(K("k")));
            Assert.Contains("StringAppendOperator", read.Message, StringComparison.Ordinal);
        }
    }

    private sealed class Failing : KvMergeOperator
    {
        public bool Throw { get; init; }

        public override string Name => "Failing";

        public override bool TryFullMerge(ReadOnlySpan<byte> key, bool hasExistingValue, ReadOnlySpan<byte> existingValue,
            IReadOnlyList<ReadOnlyMemory<byte>> operands, IBufferWriter<byte> result) =>
            Throw ? throw new FormatException("bad operand") : false;
    }

    [Fact]
    public void AFailedMergeIsCorruptionAndAThrowingOperatorAKvException()
    {
        (KvDb db, _, _) = Open(new Failing());
        using (db)
        {
            db.Merge(K("k"), K("v"));
            Assert.Throws<KvCorruptionException>(() => db.Get(K("k")));
            using KvIterator it = db.NewIterator();
            Assert.Throws<KvCorruptionException>(() => it.SeekToFirst());
        }
        (KvDb db2, _, _) = Open(new Failing { Throw = true });
        using (db2)
        {
            db2.Merge(K("k"), K("v"));
            KvException e = Assert.ThrowsAny<KvException>(() => db2.Get(K("k")));
            Assert.IsType<FormatException>(e.InnerException);
        }
    }

    [Fact]
    public void RangeDeletionEndsTheOperandsItCovers()
    {
        (KvDb db, _, _) = Open(new StringAppendOperator());
        using (db)
        {
            db.Merge(K("k"), K("old"));
            db.Flush();
            db.DeleteRange(K("a"), K("z"));
            db.Merge(K("k"), K("new"));
            Assert.Equal("new", Str(db.Get(K("k"))));
            using KvIterator it = db.NewIterator();
            it.SeekForPrev(K("zz"));
            Assert.Equal("new", Encoding.ASCII.GetString(it.Value));
            db.Flush();
            db.CompactRange(null, null);
            Assert.Equal("new", Str(db.Get(K("k"))));
        }
    }
}
