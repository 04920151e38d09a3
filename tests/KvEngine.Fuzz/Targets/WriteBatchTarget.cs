using KvEngine.Db;
using KvEngine.Db.State;
using KvEngine.Db.Write;
using KvEngine.Iterators;
using KvEngine.Memtable;
using KvEngine.Versions;
using KvEngine.Wal;

namespace KvEngine.Fuzz.Targets;

/// <summary>
/// WriteBatch target: the input is one batch representation (a WAL record's payload), validated by
/// <see cref="WriteBatchDecoder"/>, its sequence range checked, and when valid applied to the
/// memtables of column families 0 and 1 (family 2 dropped, the others unknown) as WAL recovery
/// (WalReplayer) applies it (<see cref="MemTableInserter"/>), then the memtables are
/// read back. Not thread-safe (one fuzzing process runs it on one thread).
/// </summary>
internal static class WriteBatchTarget
{
    private static readonly KvBlockCache s_cache = new(1 << 20);
    private static readonly ColumnFamilyData?[] s_families = [Family(0, "default"), Family(1, "one"), null];

    public static void Run(ReadOnlySpan<byte> input)
    {
        WriteBatchDecoder.Validate(input);
        ulong first = KvEngine.Db.Recovery.WalReplayer.CheckReplayedSequences(input, "/fuzz/000004.log", out _);
        foreach (ColumnFamilyData? cfd in s_families)
        {
            if (cfd != null)
            {
                cfd.Mem = new MemTable(4096);
            }
        }
        try
        {
            var inserter = new MemTableInserter(s_families, first, concurrent: false, logNumber: 4);
            WriteBatchDecoder.Iterate(input, ref inserter);
            foreach (ColumnFamilyData? cfd in s_families)
            {
                if (cfd == null)
                {
                    continue;
                }
                using InternalIterator it = cfd.Mem.NewIterator();
                for (it.SeekToFirst(); it.Valid; it.Next())
                {
                    _ = it.Key.Length + it.Value.Length;
                }
            }
        }
        finally
        {
            foreach (ColumnFamilyData? cfd in s_families)
            {
                cfd?.Mem.Unref();
            }
        }
    }

    private static ColumnFamilyData Family(uint id, string name) =>
        new(new ColumnFamilyVersions(id, name, Versions.Version.Empty(null), 0), new ColumnFamilyOptions { WriteBufferSize = 1 << 16 }, s_cache, null,
            "/fuzz", new Storage.FaultInjectionFileSystem(), null, typeof(WriteBatchTarget), new Db.State.DbMutex());
}
