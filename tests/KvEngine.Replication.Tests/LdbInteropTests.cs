using System.ComponentModel;
using System.Diagnostics;

namespace KvEngine.Replication.Tests;

/// <summary>
/// A node's database and its snapshots are ordinary RocksDB databases: RocksDB 7.8's ldb (Debian's
/// rocksdb-tools, installed by CI) lists their families and scans them. A missing ldb fails the
/// test with the install command; it never skips.
/// </summary>
public sealed class LdbInteropTests
{
    private static string Ldb(params string[] args)
    {
        var psi = new ProcessStartInfo("ldb") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (string a in args)
        {
            psi.ArgumentList.Add(a);
        }
        Process process;
        try
        {
            process = Process.Start(psi)!;
        }
        catch (Win32Exception e)
        {
            Assert.Fail($"ldb is not installed ({e.Message}); install it with `apt-get install -y rocksdb-tools`.");
            throw;
        }
        using (process)
        {
            Task<string> stdout = process.StandardOutput.ReadToEndAsync();
            Task<string> stderr = process.StandardError.ReadToEndAsync();
            Assert.True(process.WaitForExit(60_000), "ldb timed out");
            Assert.True(process.ExitCode == 0, $"ldb {string.Join(' ', args)} exit {process.ExitCode}: {stderr.Result}");
            return stdout.Result;
        }
    }

    [Fact]
    public async Task Ldb_scans_a_node_database_and_its_snapshot()
    {
        using var dir = new TempDirectory();
        await using (LocalReplica replica = await LocalReplica.OpenAsync(dir.Path, new KvStateMachineOptions { SnapshotInterval = 2 }))
        {
            await replica.AppendAndApplyAsync(LocalReplica.Put("alpha", "1"), LocalReplica.Put("beta", "2"), LocalReplica.Put("gamma", "3"));
        }
        string db = Directory.GetDirectories(dir.Path, "db-*").Single();
        Assert.Contains("{default, kvengine_raft}", Ldb($"--db={db}", "list_column_families"), StringComparison.Ordinal);
        Assert.Equal("alpha : 1\nbeta : 2\ngamma : 3\n", Ldb($"--db={db}", "scan"));
        // The applied state: index 3, term 1 (two little-endian 64-bit numbers).
        Assert.Equal("0x6170706C696564 : 0x03000000000000000100000000000000\n", Ldb($"--db={db}", "--column_family=kvengine_raft", "scan", "--hex"));

        string snapshot = Directory.GetDirectories(Path.Combine(dir.Path, "snapshots")).Single();
        Assert.Equal("alpha : 1\nbeta : 2\n", Ldb($"--db={snapshot}", "scan"));
    }
}
