namespace KvEngine.Tests.Db;

/// <summary>
/// One live column family of the column-family model test: its name, options, current handle and
/// the contents it must hold. A family re-created under the same name is a new instance (its
/// snapshots' copies are not this one's). Not thread-safe.
/// </summary>
internal sealed class ModelFamily
{
    public ModelFamily(string name, ColumnFamilyOptions options, ColumnFamilyHandle handle)
    {
        Name = name;
        Options = options;
        Handle = handle;
    }

    public string Name { get; }

    /// <summary>The options it was created with (given again at every reopen).</summary>
    public ColumnFamilyOptions Options { get; }

    /// <summary>The handle of the database instance now open.</summary>
    public ColumnFamilyHandle Handle { get; set; }

    public SortedDictionary<byte[], byte[]> Data { get; } = new(ByteArrayComparer.Instance);

    /// <summary>Applies a delete-range to the model: every key in [begin, end) goes.</summary>
    public void RemoveRange(byte[] begin, byte[] end) => RangeDel.RangeDelModelTests.RemoveRange(Data, begin, end);

    /// <summary>Applies a write to the model (null value = delete).</summary>
    public void Apply(byte[] key, byte[]? value)
    {
        if (value == null)
        {
            Data.Remove(key);
        }
        else
        {
            Data[key] = value;
        }
    }

    public override string ToString() => Name;
}
