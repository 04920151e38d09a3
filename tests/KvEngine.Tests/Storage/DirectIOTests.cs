using KvEngine.Storage;

namespace KvEngine.Tests.Storage;

/// <summary>
/// A file system that refuses O_DIRECT: the file open says so with a typed exception naming the
/// path, and a database asked for direct I/O there fails at open with <see cref="KvException"/>
/// naming the directory and the option, for reads and for flush and compaction writes alike.
/// </summary>
public sealed class DirectIOTests
{
    [RefusingDirectIOFact]
    public void OpeningAFileWithDirectIOWhereTheFileSystemRefusesItIsNotSupported()
    {
        string path = Path.Combine(DirectIORefusingMount.Directory!, $"kvengine-{Guid.NewGuid():N}.sst");
        File.WriteAllBytes(path, new byte[100]);
        try
        {
            var e = Assert.Throws<NotSupportedException>(() => LocalFileSystem.Instance.OpenRandomAccess(path, useDirectIO: true));
            Assert.Contains(path, e.Message, StringComparison.Ordinal);
            Assert.Throws<NotSupportedException>(() => LocalFileSystem.Instance.CreateWritable(path + ".new", useDirectIO: true));
            using IRandomAccessFile buffered = LocalFileSystem.Instance.OpenRandomAccess(path, useDirectIO: false);
            Assert.Equal(100, buffered.Length);
        }
        finally
        {
            File.Delete(path);
        }
    }

    [RefusingDirectIOFact]
    public void ADatabaseAskedForDirectIOOnAFileSystemThatRefusesItFailsAtOpenNamingTheOption()
    {
        string dir = Path.Combine(DirectIORefusingMount.Directory!, $"kvengine-db-{Guid.NewGuid():N}");
        try
        {
            var reads = Assert.Throws<KvNotSupportedException>(() => KvDb.Open(dir, new KvOptions { UseDirectReads = true }));
            Assert.Contains("UseDirectReads (use_direct_reads)", reads.Message, StringComparison.Ordinal);
            Assert.Contains(dir, reads.Message, StringComparison.Ordinal);
            var writes = Assert.Throws<KvNotSupportedException>(() => KvDb.Open(dir, new KvOptions { UseDirectIoForFlushAndCompaction = true }));
            Assert.Contains("UseDirectIoForFlushAndCompaction (use_direct_io_for_flush_and_compaction)", writes.Message, StringComparison.Ordinal);

            using (KvDb db = KvDb.Open(dir, new KvOptions())) // buffered: fine, and the LOCK was released above
            {
                db.Put("k"u8, "v"u8);
                db.Flush();
            }
            Assert.Throws<KvNotSupportedException>(() => KvDb.OpenReadOnly(dir, new KvOptions { UseDirectReads = true }));
        }
        finally
        {
            if (Directory.Exists(dir))
            {
                Directory.Delete(dir, recursive: true);
            }
        }
    }
}
