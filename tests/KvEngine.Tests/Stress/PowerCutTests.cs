using System.IO.MemoryMappedFiles;
using System.Text;
using KvEngine.CrashTest;
using KvEngine.Storage;

namespace KvEngine.Tests.Stress;

/// <summary>
/// Power cuts through a real kernel file system (issue 39): powercutfs, a FUSE file system that
/// keeps only what fsync and directory fsync made durable, first checked directly (write(2) and
/// shared-mapping stores with and without syncs, names with and without a directory sync, a
/// rename, requests after the cut), then kvcrashtest --power-cut's short form with the mapped
/// write-ahead log on and off, and a lying disk (fsync of the WAL does nothing) that must be
/// reported as a lost write. Skipped only where FUSE cannot be used (<see cref="FuseFactAttribute"/>).
/// </summary>
public sealed class PowerCutTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-powercut-");

    public void Dispose() => _dir.Delete(recursive: true);

    [FuseFact]
    public void TheCutKeepsExactlyWhatWasSynced()
    {
        string binary = PowerCutFs.Build(_dir.FullName);
        string mnt = Path.Combine(_dir.FullName, "mnt"), saved = Path.Combine(_dir.FullName, "saved");
        MemoryMappedFile? map = null;
        MemoryMappedViewAccessor? view = null;
        using (PowerCutFs fs = PowerCutFs.Mount(binary, mnt, null, saved, null))
        {
            string P(string name) => Path.Combine(mnt, name);
            WriteSynced(P("a"), "a1");
            WriteSynced(P("current"), "old");
            Map(P("mapped"), 2 * 4096);
            LocalFileSystem.Instance.SyncDirectory(mnt);
            File.AppendAllText(P("a"), "+unsynced");                // not synced: dropped
            WriteSynced(P("renamed.tmp"), "renamed");
            File.Move(P("renamed.tmp"), P("renamed"));
            WriteSynced(P("later"), "x");
            File.Delete(P("later"));
            LocalFileSystem.Instance.SyncDirectory(mnt);           // makes "renamed" durable, "later" never was
            WriteSynced(P("orphan"), "synced, but its name is not"); // no directory sync after it: gone
            WriteSynced(P("current.tmp"), "new");
            File.Move(P("current.tmp"), P("current"), overwrite: true); // the rename is not synced: "old" stays
            (map, view) = OpenMapped(P("mapped"));
            Store(view, 0, "page0 synced");
            view.Flush();                                          // msync(MS_SYNC): written back and fsynced
            Store(view, 4096, "page1 unsynced");                   // dirty in the page cache at the cut
            Assert.Equal("a1+unsynced", File.ReadAllText(P("a")));

            Assert.StartsWith("cut ", fs.Cut(), StringComparison.Ordinal);
            Assert.ThrowsAny<IOException>(() => File.ReadAllText(P("a")));
            Assert.ThrowsAny<IOException>(() => File.WriteAllText(P("b"), "after the cut"));
            try
            {
                view.Flush(); // the late writeback of page 1 is refused
            }
            catch (IOException)
            {
            }
            Close(ref map, ref view);
            fs.Unmount();
        }
        Assert.Equal(["a", "current", "mapped", "renamed"], Directory.GetFiles(saved).Select(Path.GetFileName).Order(StringComparer.Ordinal));
        Assert.Equal("a1", File.ReadAllText(Path.Combine(saved, "a")));
        Assert.Equal("old", File.ReadAllText(Path.Combine(saved, "current")));
        Assert.Equal("renamed", File.ReadAllText(Path.Combine(saved, "renamed")));
        byte[] mapped = File.ReadAllBytes(Path.Combine(saved, "mapped"));
        Assert.Equal(2 * 4096, mapped.Length);
        Assert.Equal("page0 synced", Encoding.ASCII.GetString(mapped, 0, 12));
        Assert.All(mapped[4096..], b => Assert.Equal(0, b));

        // Remounted on what survived; an unmount without a cut keeps everything.
        string again = Path.Combine(_dir.FullName, "again");
        using (PowerCutFs fs = PowerCutFs.Mount(binary, mnt, saved, again, null))
        {
            Assert.Equal("old", File.ReadAllText(Path.Combine(mnt, "current")));
            File.AppendAllText(Path.Combine(mnt, "a"), "+a2");
            fs.Unmount();
        }
        Assert.Equal("a1+a2", File.ReadAllText(Path.Combine(again, "a")));
    }

    /// <summary>--keep-unsynced-one-in 1: every unsynced written page survives (a disk that wrote them all back), names still need a directory sync.</summary>
    [FuseFact]
    public void TheCutCanKeepUnsyncedPagesButNotUnsyncedNames()
    {
        string binary = PowerCutFs.Build(_dir.FullName);
        string mnt = Path.Combine(_dir.FullName, "mnt"), saved = Path.Combine(_dir.FullName, "saved");
        using (PowerCutFs fs = PowerCutFs.Mount(binary, mnt, null, saved, null, keepUnsyncedOneIn: 1, seed: 1))
        {
            WriteSynced(Path.Combine(mnt, "log"), "synced");
            WriteSynced(Path.Combine(mnt, "shrunk"), new string('s', 5000));
            LocalFileSystem.Instance.SyncDirectory(mnt);
            File.AppendAllText(Path.Combine(mnt, "log"), "+" + new string('u', 5000)); // two pages, neither synced
            File.WriteAllText(Path.Combine(mnt, "shrunk"), "x");                       // a truncation is not a page write
            File.WriteAllText(Path.Combine(mnt, "unnamed"), "data");
            Assert.Contains("unsynced_pages_kept 3", fs.Cut(), StringComparison.Ordinal); // two of "log", one of "unnamed"
            fs.Unmount();
        }
        Assert.Equal("synced+" + new string('u', 5000), File.ReadAllText(Path.Combine(saved, "log")));
        Assert.Equal(new string('s', 5000), File.ReadAllText(Path.Combine(saved, "shrunk")));
        Assert.False(File.Exists(Path.Combine(saved, "unnamed")));
    }

    [FuseFact]
    public void KvCrashTestPowerCutsFindNoLossWithTheMappedWalOnAndOff()
    {
        (int code, string output) = KvStressTests.Run(KvStressTests.KvCrashTest(), ["--power-cut", "--cycles", "6", "--threads", "2", "--max-key", "2000",
            "--min-kill-ms", "200", "--max-kill-ms", "1200", "--seed", "21", "--db", Path.Combine(_dir.FullName, "on")]);
        Assert.True(code == 0, output);
        Assert.Contains("mode PowerCut (FUSE), mmap WAL on, ", output, StringComparison.Ordinal);
        Assert.Contains(", column families 1, cycles 6 (", output, StringComparison.Ordinal);
        Assert.Contains("losses found 0", output, StringComparison.Ordinal);
        Assert.Matches(@"cycles with a mapped WAL seen [1-6],", output); // the engine really wrote its log through a mapping on FUSE

        (code, output) = KvStressTests.Run(KvStressTests.KvCrashTest(), ["--power-cut", "--mmap-wal", "0", "--cycles", "3", "--threads", "2", "--max-key", "2000",
            "--min-kill-ms", "200", "--max-kill-ms", "1200", "--seed", "22", "--db", Path.Combine(_dir.FullName, "off")]);
        Assert.True(code == 0, output);
        Assert.Contains("mode PowerCut (FUSE), mmap WAL off, ", output, StringComparison.Ordinal);
        Assert.Contains(", column families 1, cycles 3 (", output, StringComparison.Ordinal);
        Assert.Contains("cycles with a mapped WAL seen 0,", output, StringComparison.Ordinal);
        Assert.Contains("losses found 0", output, StringComparison.Ordinal);
    }

    /// <summary>A disk whose fsync of the log does nothing loses synced writes, and the verifier says so.</summary>
    [FuseFact]
    public void ALyingFsyncOfTheWalIsReportedAsALostWrite()
    {
        (int code, string output) = KvStressTests.Run(KvStressTests.KvCrashTest(), ["--power-cut", "--lie-fsync", ".log", "--cut-in-open-one-in", "0",
            "--cycles", "3", "--threads", "2", "--max-key", "2000", "--min-kill-ms", "300", "--max-kill-ms", "600", "--seed", "23",
            "--db", Path.Combine(_dir.FullName, "lie"), "--", "-sync=1", "-flush_one_in=0", "-compact_range_one_in=0", "-write_buffer_size=16777216"]);
        Assert.Equal(1, code);
        Assert.Contains("VERIFICATION FAILURE: after open: LOST WRITE: key ", output, StringComparison.Ordinal);
        Assert.Contains("kvcrashtest: FAILED", output, StringComparison.Ordinal);
    }

    private static void WriteSynced(string path, string text)
    {
        using var f = new FileStream(path, FileMode.Create, FileAccess.Write);
        f.Write(Encoding.ASCII.GetBytes(text));
        f.Flush(flushToDisk: true);
    }

    private static void Map(string path, int size)
    {
        using var f = new FileStream(path, FileMode.Create, FileAccess.Write);
        f.SetLength(size);
        f.Flush(flushToDisk: true);
    }

    private static (MemoryMappedFile, MemoryMappedViewAccessor) OpenMapped(string path)
    {
        MemoryMappedFile map = MemoryMappedFile.CreateFromFile(path, FileMode.Open, null, 0, MemoryMappedFileAccess.ReadWrite);
        return (map, map.CreateViewAccessor(0, 0, MemoryMappedFileAccess.ReadWrite));
    }

    private static void Store(MemoryMappedViewAccessor view, long offset, string text)
    {
        byte[] b = Encoding.ASCII.GetBytes(text);
        view.WriteArray(offset, b, 0, b.Length);
    }

    private static void Close(ref MemoryMappedFile? map, ref MemoryMappedViewAccessor? view)
    {
        try
        {
            view?.Dispose();
        }
        catch (IOException)
        {
            // Flushing on dispose fails after the cut: the file system refuses everything.
        }
        map?.Dispose();
        (map, view) = (null, null);
    }
}
