using System.Globalization;
using KvEngine.Tests.Db;
using KvEngine.Tests.Wal;
using TableTools = KvEngine.Tests.Table.RocksDbTools;

namespace KvEngine.Tests.Interop;

/// <summary>
/// Database-level questions put to RocksDB 7.8's ldb and sst_dump (run through
/// <see cref="RocksDbTools"/>, which fails the test with the install command when a tool is
/// missing). Every command that opens a database runs on a fresh copy: RocksDB replays the WAL,
/// flushes and writes a new MANIFEST, which must not change the directory under test.
/// </summary>
internal static class RocksDbOracle
{
    /// <summary>Copies <paramref name="db"/> (files only; a database directory is flat) to a sibling directory.</summary>
    public static string Copy(string db, string suffix)
    {
        string copy = db + "-" + suffix;
        Directory.CreateDirectory(copy);
        foreach (string file in Directory.GetFiles(db))
        {
            string name = Path.GetFileName(file);
            if (name != "LOCK")
            {
                File.Copy(file, Path.Combine(copy, name), overwrite: true);
            }
        }
        return copy;
    }

    /// <summary>
    /// Point lookups by RocksDB (<c>ldb query --hex</c> on a copy, one <c>get</c> per key on its
    /// stdin): the value of each key, or null when RocksDB says "Not found". ldb's query session
    /// ends at the first "Not found", so the answers stop there (a shorter list). Point lookups go
    /// through RocksDB's filters, unlike scans.
    /// </summary>
    public static List<byte[]?> Get(string db, IReadOnlyList<byte[]> keys) => Get(db, keys, loadOptions: false);

    /// <summary>
    /// <see cref="Get(string, IReadOnlyList{byte[]})"/>; with <paramref name="loadOptions"/> ldb
    /// opens with the database's OPTIONS file (<c>--try_load_options</c>: its prefix extractor and
    /// filter settings, so Gets use prefix filters).
    /// </summary>
    public static List<byte[]?> Get(string db, IReadOnlyList<byte[]> keys, bool loadOptions)
    {
        string copy = Copy(db, "ldbget");
        try
        {
            var psi = new System.Diagnostics.ProcessStartInfo("ldb")
            {
                RedirectStandardInput = true,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                UseShellExecute = false,
            };
            psi.ArgumentList.Add($"--db={copy}");
            if (loadOptions)
            {
                psi.ArgumentList.Add("--try_load_options");
            }
            psi.ArgumentList.Add("--hex");
            psi.ArgumentList.Add("query");
            using var process = System.Diagnostics.Process.Start(psi)!;
            Task<string> stdout = process.StandardOutput.ReadToEndAsync();
            Task<string> stderr = process.StandardError.ReadToEndAsync();
            var input = new System.Text.StringBuilder();
            foreach (byte[] key in keys)
            {
                input.Append("get 0x").Append(Convert.ToHexString(key)).Append('\n');
            }
            try
            {
                process.StandardInput.Write(input.ToString());
                process.StandardInput.Close();
            }
            catch (IOException)
            {
                // ldb stopped reading; what it answered, and its stderr, are checked below.
            }
            Assert.True(process.WaitForExit(120_000), "ldb query timed out");
            process.WaitForExit();
            var results = new List<byte[]?>();
            foreach (string line in stdout.Result.Split('\n'))
            {
                int arrow = line.IndexOf(" ==> 0x", StringComparison.Ordinal);
                if (arrow > 0)
                {
                    results.Add(Convert.FromHexString(line.AsSpan(arrow + 7).Trim()));
                }
                else if (line.StartsWith("Not found ", StringComparison.Ordinal))
                {
                    results.Add(null);
                    break;
                }
            }
            Assert.True(results.Count == keys.Count || results[^1] == null, $"ldb query answered {results.Count} of {keys.Count}: {stderr.Result}");
            return results;
        }
        finally
        {
            Directory.Delete(copy, recursive: true);
        }
    }

    /// <summary>
    /// The live key/value pairs RocksDB sees in (a copy of) <paramref name="db"/>, in its order, from
    /// <c>ldb scan --hex</c>: one <c>0xKEY : 0xVALUE</c> line per entry.
    /// </summary>
    public static List<KeyValuePair<byte[], byte[]>> Scan(string db)
    {
        string copy = Copy(db, "ldbscan");
        try
        {
            string output = RocksDbTools.RunOk("ldb", $"--db={copy}", "scan", "--hex");
            var result = new List<KeyValuePair<byte[], byte[]>>();
            foreach (string line in output.Split('\n', StringSplitOptions.RemoveEmptyEntries))
            {
                int sep = line.IndexOf(" : ", StringComparison.Ordinal);
                Assert.True(sep > 0, $"Unexpected ldb scan line: '{line}'");
                result.Add(new(ParseHex(line.AsSpan(0, sep)), ParseHex(line.AsSpan(sep + 3))));
            }
            return result;
        }
        finally
        {
            Directory.Delete(copy, recursive: true);
        }
    }

    /// <summary>
    /// The live pairs after RocksDB compacted (a copy of) <paramref name="db"/> fully
    /// (<c>ldb compact</c>): RocksDB reads every entry of every table and rewrites them.
    /// </summary>
    public static List<KeyValuePair<byte[], byte[]>> ScanAfterCompaction(string db)
    {
        string copy = Copy(db, "ldbcompact");
        try
        {
            RocksDbTools.RunOk("ldb", $"--db={copy}", "compact");
            return Scan(copy);
        }
        finally
        {
            Directory.Delete(copy, recursive: true);
        }
    }

    /// <summary>Runs <c>ldb checkconsistency</c> on a copy; it must print OK.</summary>
    public static void AssertConsistent(string db)
    {
        string copy = Copy(db, "ldbcheck");
        try
        {
            string output = RocksDbTools.RunOk("ldb", $"--db={copy}", "checkconsistency");
            Assert.Equal("OK", output.Trim());
        }
        finally
        {
            Directory.Delete(copy, recursive: true);
        }
    }

    /// <summary><c>ldb manifest_dump</c> of the database's current MANIFEST (read only, no copy needed).</summary>
    public static string ManifestDump(string db)
    {
        string output = RocksDbTools.RunOk("ldb", $"--db={db}", "manifest_dump");
        Assert.DoesNotContain("Corruption", output, StringComparison.Ordinal);
        return output;
    }

    /// <summary>sst_dump checks every table of <paramref name="db"/> with checksums (reading its stderr too).</summary>
    public static int AssertTablesVerify(string db)
    {
        string[] tables = Directory.GetFiles(db, "*.sst");
        foreach (string table in tables)
        {
            TableTools.AssertSstDumpCheckPasses(table);
        }
        return tables.Length;
    }

    /// <summary>Asserts two sorted key/value sequences are equal, naming the first difference.</summary>
    public static void AssertSameContents(IReadOnlyList<KeyValuePair<byte[], byte[]>> expected,
        IReadOnlyList<KeyValuePair<byte[], byte[]>> actual, string what)
    {
        int n = Math.Min(expected.Count, actual.Count);
        for (int i = 0; i < n; i++)
        {
            if (!expected[i].Key.AsSpan().SequenceEqual(actual[i].Key))
            {
                Assert.Fail($"{what}: entry {i} has key {Hex(actual[i].Key)}, expected {Hex(expected[i].Key)}.");
            }
            if (!expected[i].Value.AsSpan().SequenceEqual(actual[i].Value))
            {
                Assert.Fail($"{what}: key {Hex(expected[i].Key)} has value {Hex(actual[i].Value)}, expected {Hex(expected[i].Value)}.");
            }
        }
        if (expected.Count != actual.Count)
        {
            string extra = expected.Count > n ? "missing " + Hex(expected[n].Key) : "unexpected " + Hex(actual[n].Key);
            Assert.Fail($"{what}: {actual.Count} entries, expected {expected.Count}; first {extra}.");
        }
    }

    /// <summary>A sorted model's contents as a list.</summary>
    public static List<KeyValuePair<byte[], byte[]>> ToList(SortedDictionary<byte[], byte[]> model) => model.ToList();

    public static SortedDictionary<byte[], byte[]> NewModel() => new(ByteArrayComparer.Instance);

    /// <summary>Every live pair KvEngine sees, by a forward scan.</summary>
    public static List<KeyValuePair<byte[], byte[]>> ForwardScan(KvDb db)
    {
        var result = new List<KeyValuePair<byte[], byte[]>>();
        using KvIterator it = db.NewIterator();
        for (it.SeekToFirst(); it.Valid; it.Next())
        {
            result.Add(new(it.Key.ToArray(), it.Value.ToArray()));
        }
        return result;
    }

    /// <summary>Every live pair KvEngine sees, by a backward scan, returned in ascending order.</summary>
    public static List<KeyValuePair<byte[], byte[]>> BackwardScan(KvDb db)
    {
        var result = new List<KeyValuePair<byte[], byte[]>>();
        using KvIterator it = db.NewIterator();
        for (it.SeekToLast(); it.Valid; it.Prev())
        {
            result.Add(new(it.Key.ToArray(), it.Value.ToArray()));
        }
        result.Reverse();
        return result;
    }

    public static string Hex(ReadOnlySpan<byte> bytes) => Convert.ToHexString(bytes);

    private static byte[] ParseHex(ReadOnlySpan<char> text)
    {
        text = text.Trim();
        Assert.True(text.StartsWith("0x", StringComparison.Ordinal), $"Not a hex field: '{text}'");
        ReadOnlySpan<char> digits = text[2..];
        var bytes = new byte[digits.Length / 2];
        for (int i = 0; i < bytes.Length; i++)
        {
            bytes[i] = byte.Parse(digits.Slice(2 * i, 2), NumberStyles.HexNumber, CultureInfo.InvariantCulture);
        }
        Assert.True(digits.Length % 2 == 0, $"Odd hex field: '{text}'");
        return bytes;
    }
}
