namespace KvEngine.Stress;

/// <summary>
/// The column families of a kvstress run (db_stress's -column_families, with its names: "default",
/// "1", "2", ...). Key i lives in family i % N, so a single write goes to one family while batches,
/// delete-ranges' neighbours, stripes and scans span them all; family f's write buffer is
/// (f + 1) x -write_buffer_size, so the families flush at different times and a WAL stays alive
/// for the ones that have not. Stateless and thread-safe.
/// </summary>
internal static class StressFamilies
{
    public static string Name(int family) => family == 0 ? "default" : family.ToString(System.Globalization.CultureInfo.InvariantCulture);

    /// <summary>The family of key <paramref name="key"/> among <paramref name="count"/>.</summary>
    public static int Of(long key, int count) => (int)(key % count);

    /// <summary>
    /// Opens the database at <paramref name="path"/> with <paramref name="count"/> families, creating
    /// the missing ones; <paramref name="options"/> makes fresh options (each family gets its own).
    /// </summary>
    public static KvDb Open(string path, Func<KvOptions> options, int count)
    {
        KvOptions dbOptions = options();
        if (count == 1)
        {
            return KvDb.Open(path, dbOptions);
        }
        dbOptions.CreateMissingColumnFamilies = true;
        var descriptors = new ColumnFamilyDescriptor[count];
        for (int f = 0; f < count; f++)
        {
            KvOptions o = f == 0 ? dbOptions : options();
            o.WriteBufferSize *= f + 1;
            descriptors[f] = new ColumnFamilyDescriptor(Name(f), o);
        }
        return KvDb.Open(path, dbOptions, descriptors);
    }

    /// <summary>Opens the database (a checkpoint) at <paramref name="path"/> read-only with the run's <paramref name="count"/> families.</summary>
    public static KvDb OpenReadOnly(string path, Func<KvOptions> options, int count)
    {
        var descriptors = new ColumnFamilyDescriptor[count];
        for (int f = 0; f < count; f++)
        {
            descriptors[f] = new ColumnFamilyDescriptor(Name(f), options());
        }
        return KvDb.OpenReadOnly(path, options(), descriptors);
    }

    /// <summary>The handles of the run's families by index; throws when one is missing (a lost or extra family).</summary>
    public static ColumnFamilyHandle[] Handles(KvDb db, int count)
    {
        IReadOnlyList<ColumnFamilyHandle> live = db.ColumnFamilies;
        if (live.Count != count)
        {
            throw new VerificationException($"the database has {live.Count} column families ({string.Join(", ", live)}), the run uses {count}");
        }
        var handles = new ColumnFamilyHandle[count];
        for (int f = 0; f < count; f++)
        {
            handles[f] = db.GetColumnFamily(Name(f)) ?? throw new VerificationException($"column family '{Name(f)}' is missing");
        }
        return handles;
    }
}
