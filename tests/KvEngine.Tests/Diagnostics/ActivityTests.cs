using System.Diagnostics;
using KvEngine.Diagnostics;
using KvEngine.Storage;
using KvEngine.Tests.Db;

namespace KvEngine.Tests.Diagnostics;

/// <summary>
/// The "KvEngine" activity source: a span per open, flush, compaction, ingestion and checkpoint
/// with the tags that say what it did, an Error status on failure, and none for reads and writes.
/// </summary>
public sealed class ActivityTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-activity-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Fact]
    public void OpenFlushCompactionIngestionAndCheckpointAreSpans()
    {
        string path = Path.Combine(_dir.FullName, "db");
        using var spans = new ActivityCollector(path);
        string sst = Path.Combine(_dir.FullName, "ingest.sst");
        using (var writer = new SstFileWriter())
        {
            writer.Open(sst);
            writer.Put("z1"u8, "ingested"u8);
            writer.Finish();
        }
        using (KvDb db = KvDb.Open(path, new KvOptions { DisableAutoCompactions = true }))
        {
            for (int round = 0; round < 2; round++)
            {
                db.Put("a"u8, "1"u8);
                db.Put("b"u8, "2"u8);
                db.Flush();
            }
            for (int i = 0; i < 100; i++)
            {
                db.Put("k"u8, "v"u8);
                _ = db.Get("k"u8);
            }
            db.CompactRange(null, null);
            db.IngestExternalFile([sst]);
            db.CreateCheckpoint(Path.Combine(_dir.FullName, "checkpoint"));
        }

        Activity open = Assert.Single(spans.Named(DbActivities.Open));
        Assert.Equal(Path.GetFullPath(path), open.GetTagItem(KvEngineDiagnostics.DbNamespaceTag));
        Assert.Equal(false, open.GetTagItem("kvengine.read_only"));
        Assert.Equal(1, open.GetTagItem("kvengine.column_families"));
        Assert.Equal(ActivityStatusCode.Unset, open.Status);

        // Two explicit flushes (the close's flush has nothing to write).
        IReadOnlyList<Activity> flushes = spans.Named(DbActivities.Flush);
        Assert.True(flushes.Count >= 2, $"{flushes.Count} flush spans");
        Activity flush = flushes[0];
        Assert.Equal(1, flush.GetTagItem("kvengine.flush.memtables"));
        Assert.True((long)flush.GetTagItem("kvengine.flush.table_bytes")! > 0);
        Assert.True((ulong)flush.GetTagItem("kvengine.flush.file_number")! > 0);
        Assert.NotNull(flush.GetTagItem("kvengine.job_id"));

        Activity compaction = Assert.Single(spans.Named(DbActivities.Compaction));
        Assert.Equal("default", compaction.GetTagItem("kvengine.column_family"));
        Assert.Equal(0, compaction.GetTagItem("kvengine.compaction.input_level"));
        Assert.True((int)compaction.GetTagItem("kvengine.compaction.input_files")! >= 2);
        Assert.True((long)compaction.GetTagItem("kvengine.compaction.bytes_written")! > 0);

        Activity ingest = Assert.Single(spans.Named(DbActivities.Ingest));
        Assert.Equal(1, ingest.GetTagItem("kvengine.ingest.files"));

        Activity checkpoint = Assert.Single(spans.Named(DbActivities.Checkpoint));
        Assert.Equal(Path.Combine(_dir.FullName, "checkpoint"), checkpoint.GetTagItem("kvengine.checkpoint.directory"));

        // Nothing else: no span per Get or Put.
        string[] names = [DbActivities.Open, DbActivities.Flush, DbActivities.Compaction, DbActivities.Ingest, DbActivities.Checkpoint];
        Assert.All(spans.Spans, a => Assert.Contains(a.OperationName, names));
    }

    [Fact]
    public void AFailedFlushSpanHasAnErrorStatusAndTheException()
    {
        FaultInjectionFileSystem fs = DbTestUtil.NewFs();
        const string path = "/kvtest/activity-failed-flush";
        using var spans = new ActivityCollector(path);
        KvOptions options = DbTestUtil.SmallOptions(fs);
        options.MaxBackgroundErrorResumeCount = 0;
        using KvDb db = KvDb.Open(path, options);
        db.Put("a"u8, "1"u8);
        fs.ShouldFail = (op, p) => op == FileOperation.Create && p.EndsWith(".sst", StringComparison.Ordinal);
        Assert.Throws<KvException>(db.Flush);

        Activity flush = Assert.Single(spans.Named(DbActivities.Flush));
        Assert.Equal(ActivityStatusCode.Error, flush.Status);
        ActivityEvent exception = Assert.Single(flush.Events);
        Assert.Equal("exception", exception.Name);
    }

    [Fact]
    public void AFailedOpenSpanHasAnErrorStatus()
    {
        string path = Path.Combine(_dir.FullName, "missing");
        using var spans = new ActivityCollector(path);
        Assert.Throws<KvException>(() => KvDb.OpenReadOnly(path));
        Activity open = Assert.Single(spans.Named(DbActivities.Open));
        Assert.Equal(true, open.GetTagItem("kvengine.read_only"));
        Assert.Equal(ActivityStatusCode.Error, open.Status);
    }
}
