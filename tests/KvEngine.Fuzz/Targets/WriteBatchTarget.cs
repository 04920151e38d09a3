using KvEngine.Db;
using KvEngine.Iterators;
using KvEngine.Memtable;
using KvEngine.Wal;

namespace KvEngine.Fuzz.Targets;

/// <summary>
/// WriteBatch target: the input is one batch representation (a WAL record's payload), validated by
/// <see cref="WriteBatchDecoder"/> with column family 2 dropped, its sequence range checked, and
/// when valid applied to a memtable as WAL recovery (DbImpl.ReplayLog) applies it
/// (<see cref="DbImpl.MemTableInserter"/>), then the memtable is read back. Thread-safe.
/// </summary>
internal static class WriteBatchTarget
{
    private static readonly HashSet<uint> s_droppedFamilies = [2];

    public static void Run(ReadOnlySpan<byte> input)
    {
        WriteBatchDecoder.Validate(input, s_droppedFamilies);
        ulong first = DbImpl.CheckReplayedSequences(input, "/fuzz/000004.log", out _);
        using var mem = new MemTable(4096);
        var inserter = new DbImpl.MemTableInserter(mem, first, concurrent: false);
        WriteBatchDecoder.Iterate(input, ref inserter, s_droppedFamilies);
        using InternalIterator it = mem.NewIterator();
        for (it.SeekToFirst(); it.Valid; it.Next())
        {
            _ = it.Key.Length + it.Value.Length;
        }
    }
}
