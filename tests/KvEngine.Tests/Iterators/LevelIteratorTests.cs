using KvEngine.Format;
using KvEngine.Iterators;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Iterators;

public class LevelIteratorTests
{
    // Opens VectorIterators over fixed per-file entry lists and tracks what is open.
    private sealed class Factory : ITableIteratorFactory
    {
        private readonly List<(byte[] Key, byte[] Value)>[] _files;
        private readonly List<VectorIterator> _opened = [];

        public Factory(List<(byte[] Key, byte[] Value)>[] files)
        {
            _files = files;
        }

        public int Opens => _opened.Count;

        public int Live => _opened.Count(i => !i.Disposed);

        public int FailOnOpen { get; set; } = -1;

        public InternalIterator Open(int fileIndex)
        {
            Assert.InRange(fileIndex, 0, _files.Length - 1);
            Assert.True(Live == 0, "a second file iterator opened before the previous one was disposed");
            if (fileIndex == FailOnOpen)
            {
                throw new KvCorruptionException($"bad table footer in file {fileIndex} (injected)");
            }
            var it = new VectorIterator(_files[fileIndex]);
            _opened.Add(it);
            return it;
        }
    }

    // Splits sorted random entries into consecutive files; some files keep their key range but no
    // entries (an "empty" file). Returns the files, their bounds and the entries that remain.
    private static (List<(byte[] Key, byte[] Value)>[] Files, byte[][] Smallest, byte[][] Largest, List<(byte[] Key, byte[] Value)> Model)
        Build(Random rng, int entries, int maxFileSize, int emptyPercent)
    {
        var seen = new HashSet<string>();
        var all = new List<(byte[] Key, byte[] Value)>();
        for (int i = 0; i < entries; i++)
        {
            byte[] key = InternalKeys.Create(IterTestData.RandomUserKey(rng), (ulong)(i + 1),
                rng.Next(3) == 0 ? ValueType.Deletion : ValueType.Value);
            if (seen.Add(Convert.ToHexString(key)))
            {
                all.Add((key, IterTestData.Bytes($"v{i}")));
            }
        }
        all.Sort((a, b) => InternalKeyComparer.Compare(a.Key, b.Key));
        var files = new List<List<(byte[] Key, byte[] Value)>>();
        var smallest = new List<byte[]>();
        var largest = new List<byte[]>();
        var model = new List<(byte[] Key, byte[] Value)>();
        for (int pos = 0; pos < all.Count;)
        {
            int size = Math.Min(rng.Next(1, maxFileSize + 1), all.Count - pos);
            var chunk = all.GetRange(pos, size);
            pos += size;
            smallest.Add(chunk[0].Key);
            largest.Add(chunk[^1].Key);
            if (rng.Next(100) < emptyPercent)
            {
                files.Add([]);
            }
            else
            {
                files.Add(chunk);
                model.AddRange(chunk);
            }
        }
        return (files.ToArray(), smallest.ToArray(), largest.ToArray(), model);
    }

    [Theory]
    [InlineData(1, 300, 10, 20)]
    [InlineData(2, 300, 1, 30)]
    [InlineData(3, 500, 40, 0)]
    [InlineData(4, 200, 5, 70)]
    [InlineData(5, 60, 3, 100)]
    [InlineData(6, 1, 1, 0)]
    public void MatchesConcatenationUnderRandomOperations(int seed, int entries, int maxFileSize, int emptyPercent)
    {
        var rng = new Random(seed);
        var (files, smallest, largest, model) = Build(rng, entries, maxFileSize, emptyPercent);
        var factory = new Factory(files);
        var level = new LevelIterator(smallest, largest, factory);
        int pos = -1;
        for (int op = 0; op < 3000; op++)
        {
            bool valid = pos >= 0 && pos < model.Count;
            int r = rng.Next(100);
            string what;
            if (r < 5)
            {
                what = "SeekToFirst";
                level.SeekToFirst();
                pos = 0;
            }
            else if (r < 10)
            {
                what = "SeekToLast";
                level.SeekToLast();
                pos = model.Count - 1;
            }
            else if (r < 20)
            {
                byte[] t = IterTestData.RandomSeekTarget(rng, (ulong)entries);
                what = "Seek " + IterTestData.Describe(t);
                level.Seek(t);
                pos = model.FindIndex(e => InternalKeyComparer.Compare(e.Key, t) >= 0) is int i and >= 0 ? i : model.Count;
            }
            else if (r < 30)
            {
                byte[] t = IterTestData.RandomSeekTarget(rng, (ulong)entries);
                what = "SeekForPrev " + IterTestData.Describe(t);
                level.SeekForPrev(t);
                pos = model.FindLastIndex(e => InternalKeyComparer.Compare(e.Key, t) <= 0);
            }
            else if (!valid)
            {
                continue;
            }
            else if (r < 65)
            {
                what = "Next";
                level.Next();
                pos++;
            }
            else
            {
                what = "Prev";
                level.Prev();
                pos--;
            }
            valid = pos >= 0 && pos < model.Count;
            Assert.True(valid == level.Valid, $"op {op} {what}: valid {level.Valid}, expected {valid}");
            Assert.True(factory.Live <= 1);
            if (valid)
            {
                Assert.True(model[pos].Key.AsSpan().SequenceEqual(level.Key),
                    $"op {op} {what}: key {IterTestData.Describe(level.Key)}, expected {IterTestData.Describe(model[pos].Key)}");
                Assert.Equal(IterTestData.Text(model[pos].Value), IterTestData.Text(level.Value));
                Assert.Equal(1, factory.Live);
            }
            else
            {
                Assert.Equal(-1, level.CurrentFileIndex);
                Assert.Equal(0, factory.Live);
            }
        }
        level.Dispose();
        Assert.Equal(0, factory.Live);
    }

    [Fact]
    public void CrossesFileBoundariesAndSkipsEmptyFilesLazily()
    {
        byte[] K(string u, ulong seq) => InternalKeys.Create(IterTestData.Bytes(u), seq, ValueType.Value);
        var files = new List<(byte[] Key, byte[] Value)>[]
        {
            [(K("a", 1), [1]), (K("b", 2), [2])],
            [], // covers c..d but yields nothing
            [],
            [(K("e", 3), [3])],
            [(K("f", 4), [4]), (K("g", 5), [5])],
            [],
        };
        byte[][] smallest = [K("a", 1), K("c", 9), K("d", 9), K("e", 3), K("f", 4), K("h", 9)];
        byte[][] largest = [K("b", 2), K("c", 1), K("d", 1), K("e", 3), K("g", 5), K("i", 1)];
        var factory = new Factory(files);
        using var level = new LevelIterator(smallest, largest, factory);
        Assert.Equal(0, factory.Opens);

        level.Seek(K("e", 3));
        Assert.Equal(1, factory.Opens);
        Assert.Equal(3, level.CurrentFileIndex);
        level.Prev(); // back over two empty files into file 0
        Assert.Equal("b", IterTestData.Text(InternalKeys.UserKey(level.Key)));
        Assert.Equal(0, level.CurrentFileIndex);
        Assert.Equal(4, factory.Opens);
        level.Next(); // and forward again
        Assert.Equal("e", IterTestData.Text(InternalKeys.UserKey(level.Key)));
        level.Next();
        Assert.Equal("f", IterTestData.Text(InternalKeys.UserKey(level.Key)));
        level.Next();
        level.Seek(K("g", 5)); // same file: reused, not reopened
        int opens = factory.Opens;
        level.Next();
        Assert.False(level.Valid); // off the end through the empty last file
        Assert.Equal(opens + 1, factory.Opens);
        Assert.Equal(0, factory.Live);

        level.SeekForPrev(K("c", 5)); // inside empty file 1: the answer is file 0's last entry
        Assert.Equal("b", IterTestData.Text(InternalKeys.UserKey(level.Key)));
        level.SeekForPrev(K("a", 0)); // (a,0) sorts after (a,1): file 0's first entry
        Assert.Equal("a", IterTestData.Text(InternalKeys.UserKey(level.Key)));
        level.SeekForPrev(K("a", 5)); // before everything
        Assert.False(level.Valid);
        level.Seek(K("z", 1));
        Assert.False(level.Valid);
        level.SeekForPrev(K("z", 1));
        Assert.Equal("g", IterTestData.Text(InternalKeys.UserKey(level.Key)));
    }

    [Fact]
    public void EmptyRunIsNeverValid()
    {
        using var level = new LevelIterator([], [], new Factory([]));
        level.SeekToFirst();
        Assert.False(level.Valid);
        level.SeekToLast();
        Assert.False(level.Valid);
        level.Seek(InternalKeys.Create("a"u8, 1, ValueType.ValueTypeForSeek));
        Assert.False(level.Valid);
        level.SeekForPrev(InternalKeys.Create("a"u8, 1, ValueType.ValueTypeForSeek));
        Assert.False(level.Valid);
        Assert.Throws<InvalidOperationException>(() => level.Next());
    }

    [Fact]
    public void RejectsMismatchedBounds()
    {
        byte[] k = InternalKeys.Create("a"u8, 1, ValueType.Value);
        Assert.Throws<ArgumentException>(() => new LevelIterator([k], [], new Factory([])));
        Assert.Throws<ArgumentException>(() => new LevelIterator([[1, 2]], [k], new Factory([[]])));
    }

    [Fact]
    public void CorruptionOpeningAFilePropagates()
    {
        var rng = new Random(9);
        var (files, smallest, largest, model) = Build(rng, 100, 10, 0);
        var factory = new Factory(files) { FailOnOpen = 2 };
        using var level = new LevelIterator(smallest, largest, factory);
        level.SeekToFirst();
        var ex = Assert.Throws<KvCorruptionException>(() =>
        {
            while (level.Valid)
            {
                level.Next();
            }
        });
        Assert.Contains("file 2", ex.Message, StringComparison.Ordinal);
        Assert.False(level.Valid);
        Assert.Equal(0, factory.Live);
        level.SeekToLast(); // other files still readable
        Assert.True(model[^1].Key.AsSpan().SequenceEqual(level.Key));
    }
}
