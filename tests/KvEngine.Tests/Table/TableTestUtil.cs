using System.Text;
using KvEngine.Format;
using KvEngine.Iterators;
using KvEngine.Table;
using ValueType = KvEngine.Format.ValueType;

namespace KvEngine.Tests.Table;

internal sealed record Entry(byte[] Key, byte[] Value)
{
    public string Describe() => $"{Convert.ToHexString(InternalKeys.UserKey(Key))}@{InternalKeys.Sequence(Key)}/{InternalKeys.Type(Key)}={Convert.ToHexString(Value)}";
}

internal static class TableTestUtil
{
    public static byte[] Key(string userKey, ulong seq, ValueType type = ValueType.Value) =>
        InternalKeys.Create(Encoding.ASCII.GetBytes(userKey), seq, type);

    /// <summary>Sorted entries: keys "key000123", several versions for some, mixed types, varied values.</summary>
    public static List<Entry> MakeEntries(int count, int seed, int maxValue = 200)
    {
        var rng = new Random(seed);
        var list = new List<Entry>();
        ulong seq = 1_000_000;
        for (int i = 0; i < count; i++)
        {
            byte[] user = Encoding.ASCII.GetBytes($"key{i * 7:D7}");
            int versions = rng.Next(10) == 0 ? 3 : 1;
            for (int v = 0; v < versions; v++)
            {
                ValueType type = rng.Next(12) switch { 0 => ValueType.Deletion, 1 => ValueType.Merge, 2 => ValueType.SingleDeletion, _ => ValueType.Value };
                byte[] value = type is ValueType.Deletion or ValueType.SingleDeletion ? [] : new byte[rng.Next(maxValue)];
                for (int j = 0; j < value.Length; j++)
                {
                    value[j] = (byte)('a' + ((i + j) % 7) + (rng.Next(4) == 0 ? rng.Next(20) : 0));
                }
                list.Add(new Entry(InternalKeys.Create(user, seq - (ulong)v * 10 - (ulong)i, type), value));
            }
        }
        list.Sort((a, b) => InternalKeyComparer.Compare(a.Key, b.Key));
        return list;
    }

    public static byte[] Build(TableOptions options, IEnumerable<Entry> entries, Action<TableBuilder>? extra = null)
    {
        using var file = new MemoryWritableFile();
        using (var builder = new TableBuilder(options, file, new TableBuildContext { FileCreationTime = 1_700_000_000 }))
        {
            foreach (Entry e in entries)
            {
                builder.Add(e.Key, e.Value);
            }
            extra?.Invoke(builder);
            builder.Finish();
            Assert.Equal(file.Size, builder.FileSize);
        }
        return file.ToArray();
    }

    public static TableReader Open(byte[] table, TableOptions options, string name = "test.sst") =>
        TableReader.Open(new MemoryRandomAccessFile(table), table.Length, options, name);

    public static List<Entry> ScanForward(InternalIterator it)
    {
        var list = new List<Entry>();
        for (it.SeekToFirst(); it.Valid; it.Next())
        {
            list.Add(new Entry(it.Key.ToArray(), it.Value.ToArray()));
        }
        return list;
    }

    public static List<Entry> ScanBackward(InternalIterator it)
    {
        var list = new List<Entry>();
        for (it.SeekToLast(); it.Valid; it.Prev())
        {
            list.Add(new Entry(it.Key.ToArray(), it.Value.ToArray()));
        }
        list.Reverse();
        return list;
    }

    public static void AssertSame(IReadOnlyList<Entry> expected, IReadOnlyList<Entry> actual)
    {
        Assert.Equal(expected.Count, actual.Count);
        for (int i = 0; i < expected.Count; i++)
        {
            Assert.Equal(expected[i].Describe(), actual[i].Describe());
        }
    }
}
