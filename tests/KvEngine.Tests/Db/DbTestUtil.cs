using System.Text;
using KvEngine.Storage;

namespace KvEngine.Tests.Db;

/// <summary>
/// Shared helpers of the database-level durability and misuse tests: in-memory databases, string
/// keys, whole-database reads, and ending a database instance the way a crash would.
/// </summary>
internal static class DbTestUtil
{
    public const string Parent = "/kvtest";
    public const string DbPath = "/kvtest/db";

    /// <summary>A fresh in-memory file system holding the parent directory of <see cref="DbPath"/>.</summary>
    public static FaultInjectionFileSystem NewFs()
    {
        var fs = new FaultInjectionFileSystem();
        fs.CreateDirectory(Parent);
        return fs;
    }

    /// <summary>Options on <paramref name="fs"/> with small memtables, so switches and flushes happen.</summary>
    public static KvOptions SmallOptions(IFileSystem fs, long writeBufferSize = 16 << 10, int maxWriteBufferNumber = 2) => new()
    {
        FileSystem = fs,
        WriteBufferSize = writeBufferSize,
        MaxWriteBufferNumber = maxWriteBufferNumber,
    };

    /// <summary>
    /// <paramref name="families"/> with a "default" descriptor with <paramref name="options"/> in
    /// front when they do not name it (a list of families must name "default", as in RocksDB).
    /// </summary>
    public static List<ColumnFamilyDescriptor> WithDefault(ColumnFamilyOptions options, IEnumerable<ColumnFamilyDescriptor> families)
    {
        var list = new List<ColumnFamilyDescriptor>(families);
        if (!list.Exists(static d => d.Name == "default"))
        {
            list.Insert(0, new ColumnFamilyDescriptor("default", options));
        }
        return list;
    }

    /// <summary>Table files in all levels (compaction may have moved level-0 files down).</summary>
    public static int TotalTableFiles(KvDb db) => TotalTableFiles(db, db.DefaultColumnFamily);

    /// <summary>Table files of <paramref name="family"/> in all levels.</summary>
    public static int TotalTableFiles(KvDb db, ColumnFamilyHandle family)
    {
        int n = 0;
        for (int level = 0; level < 7; level++)
        {
            n += int.Parse(db.GetProperty(family, "rocksdb.num-files-at-level" + level)!, System.Globalization.CultureInfo.InvariantCulture);
        }
        return n;
    }

    public static byte[] B(string s) => Encoding.UTF8.GetBytes(s);

    public static string S(ReadOnlySpan<byte> b) => Encoding.UTF8.GetString(b);

    /// <summary>Every key and value, by a full forward scan.</summary>
    public static SortedDictionary<string, string> ReadAll(KvDb db, ReadOptions? options = null)
    {
        var result = new SortedDictionary<string, string>(StringComparer.Ordinal);
        using KvIterator it = db.NewIterator(options);
        string? previous = null;
        for (it.SeekToFirst(); it.Valid; it.Next())
        {
            string k = S(it.Key);
            Assert.True(previous == null || string.CompareOrdinal(previous, k) < 0, $"iterator out of order: '{previous}' then '{k}'");
            result.Add(k, S(it.Value));
            previous = k;
        }
        return result;
    }

    /// <summary>
    /// Ends <paramref name="db"/> as a crash would: every later file operation of the old instance
    /// fails (its process is gone), the file system loses what the crash loses, the abandoned
    /// instance is disposed (its errors ignored) and the file system works again for a reopen.
    /// </summary>
    public static void Abandon(FaultInjectionFileSystem fs, KvDb? db, bool powerLoss, Action? beforeDispose = null)
    {
        fs.ShouldFail = static (_, _) => true;
        if (powerLoss)
        {
            fs.SimulatePowerLoss();
        }
        else
        {
            fs.SimulateProcessCrash();
        }
        beforeDispose?.Invoke();
        try
        {
            db?.Dispose();
        }
        catch (KvException)
        {
            // The abandoned instance may fail to close: its files are gone.
        }
        fs.ShouldFail = null;
    }

    /// <summary>The database files (not LOCK/IDENTITY/CURRENT/OPTIONS-*) in <paramref name="dir"/>, by kind.</summary>
    public static (List<string> Tables, List<string> Logs, List<string> Manifests, List<string> Other) ListFiles(IFileSystem fs, string dir)
    {
        var tables = new List<string>();
        var logs = new List<string>();
        var manifests = new List<string>();
        var other = new List<string>();
        foreach (string name in fs.GetChildren(dir))
        {
            if (name.EndsWith(".sst", StringComparison.Ordinal))
            {
                tables.Add(name);
            }
            else if (name.EndsWith(".log", StringComparison.Ordinal))
            {
                logs.Add(name);
            }
            else if (name.StartsWith("MANIFEST-", StringComparison.Ordinal))
            {
                manifests.Add(name);
            }
            else if (name is not ("CURRENT" or "LOCK" or "IDENTITY") && !IsOptionsFile(name))
            {
                other.Add(name);
            }
        }
        tables.Sort(StringComparer.Ordinal);
        logs.Sort(StringComparer.Ordinal);
        manifests.Sort(StringComparer.Ordinal);
        return (tables, logs, manifests, other);
    }

    /// <summary>An OPTIONS file as the database keeps them (<c>OPTIONS-NNNNNN</c>, not a leftover <c>.dbtmp</c>).</summary>
    public static bool IsOptionsFile(string name) =>
        KvEngine.OptionsFile.OptionsFileNames.TryParse(name, out _, out bool isTemp) && !isTemp;

    /// <summary>Path of the file CURRENT names.</summary>
    public static string CurrentManifest(FaultInjectionFileSystem fs, string dir)
    {
        string name = Encoding.ASCII.GetString(fs.ReadAllBytes(Path.Combine(dir, "CURRENT"))).TrimEnd('\n');
        return Path.Combine(dir, name);
    }
}
