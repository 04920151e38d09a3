using KvEngine.Storage;
using KvEngine.Stress;

namespace KvEngine.Tests.Stress;

/// <summary>
/// kvstress's durability journal (-durability_journal): what a process recorded before it was
/// killed is what the next process's tracker holds (histories, acknowledgements, synced flags,
/// clock and watermark), so the verifier judges the power cut as the in-process model would; a
/// reset forgets every record, including a slot a killed writer reserved but never filled.
/// </summary>
public sealed class DurabilityJournalTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("kvengine-journal-");

    public void Dispose() => _dir.Delete(recursive: true);

    [Fact]
    public void AReloadedJournalHoldsTheHistoriesAndTheVerifierJudgesThem()
    {
        long watermark;
        using (DurabilityTracker t = Open(reset: true))
        {
            Write(t, 0, 1, ExpectedValue.Put(1), acknowledge: true, synced: false);
            Write(t, 0, 1, ExpectedValue.Put(2), acknowledge: true, synced: true);
            Write(t, 0, 2, ExpectedValue.Put(1), acknowledge: false, synced: false); // killed in the database call
            Write(t, 1, 6, ExpectedValue.Deleted(1), acknowledge: true, synced: false);
            watermark = t.Watermark;
            Assert.True(watermark > 0);
        }
        using (DurabilityTracker t = Open(reset: false))
        {
            Assert.Equal((4L, 3L, 1L), t.Counts());
            Assert.Equal(watermark, t.Watermark);
            KeyHistory h = t.History(0, 1)!;
            Assert.Equal([ExpectedValue.Put(1), ExpectedValue.Put(2)], h.Entries.Select(e => e.Value));
            Assert.True(h.Entries[1].Synced && h.Entries[1].Acknowledged);
            Assert.False(t.History(0, 2)!.Entries[0].Acknowledged);
            Assert.Null(t.History(1, 5));

            // A database without key 1: its synced write is lost; key 2 (unacknowledged) and 6 (unsynced) may be anything allowed.
            var fs = new FaultInjectionFileSystem();
            fs.CreateDirectory("/t");
            using KvDb db = KvDb.Open("/t/db", new KvOptions { FileSystem = fs });
            StressFlags flags = StressFlags.Parse(["-max_key=10", "-threads=2", "-power_loss_cycles=1", "-value_size_mult=8"]);
            using ExpectedState state = ExpectedState.Open("", 10, 8, reset: true);
            var verifier = new DbVerifier(flags, state, t, new StressStats());
            string msg = Assert.Throws<VerificationException>(() => verifier.VerifyAll(db, powerLost: true, "test")).Message;
            Assert.Contains("LOST WRITE: key 1 is absent", msg, StringComparison.Ordinal);
            t.Reset();
        }
        using (DurabilityTracker t = Open(reset: false))
        {
            Assert.Equal((0L, 0L, 0L), t.Counts());
        }
    }

    [Fact]
    public void ASlotReservedBeforeAResetButNeverFilledIsNotARecord()
    {
        using (DurabilityTracker t = Open(reset: true))
        {
            Write(t, 0, 1, ExpectedValue.Put(1), acknowledge: true, synced: true);
            t.Reset();
        }
        // A writer killed between reserving slot 0 and filling it: the count says 1, the slot holds the old epoch's record.
        using (FileStream f = File.Open(Path.Combine(_dir.FullName, DurabilityJournal.FileName), FileMode.Open, FileAccess.ReadWrite))
        {
            f.Position = 40;
            f.Write(BitConverter.GetBytes(1L));
        }
        using (DurabilityTracker t = Open(reset: false))
        {
            Assert.Equal((0L, 0L, 0L), t.Counts());
        }
        Assert.Throws<ArgumentException>(() => DurabilityJournal.Open(_dir.FullName, threads: 3, reset: false));
    }

    private DurabilityTracker Open(bool reset) => DurabilityTracker.Load(DurabilityJournal.Open(_dir.FullName, 2, reset), 2);

    private static void Write(DurabilityTracker t, int thread, long key, ExpectedValue value, bool acknowledge, bool synced)
    {
        long start = t.Tick();
        long slot = t.Record(thread, key, default, new HistoryEntry(value, start, long.MaxValue, t.NextOpId(), false), multiKey: false);
        if (acknowledge)
        {
            t.Acknowledge(thread, key, slot, t.Tick(), synced);
            if (synced)
            {
                t.MarkDurableBefore(start);
            }
        }
    }
}
