namespace KvEngine.Compaction;

/// <summary>
/// Cumulative counters of background work, named after RocksDB's statistics tickers
/// ("rocksdb.compact.read.bytes", ...). Thread-safe: updated with interlocked adds, read with
/// volatile loads; a reader may see one counter updated and another not yet. Each update is also
/// recorded in the user's <see cref="KvStatistics"/>, when one is configured.
/// </summary>
internal sealed class EngineCounters
{
    private readonly KvStatistics? _stats;
    private long _compactReadBytes;
    private long _compactWriteBytes;
    private long _flushWriteBytes;
    private long _flushes;
    private long _compactions;
    private long _trivialMoves;
    private long _readTriggeredCompactions;
    private long _stallMicros;
    private long _keysDroppedByFilter;

    public EngineCounters(KvStatistics? stats)
    {
        _stats = stats;
    }

    /// <summary>Bytes of compaction input files read (trivial moves read nothing).</summary>
    public long CompactReadBytes => Volatile.Read(ref _compactReadBytes);

    /// <summary>Bytes of compaction output files written.</summary>
    public long CompactWriteBytes => Volatile.Read(ref _compactWriteBytes);

    /// <summary>Bytes of level-0 tables written by flushes.</summary>
    public long FlushWriteBytes => Volatile.Read(ref _flushWriteBytes);

    /// <summary>Memtable flushes completed (recovery's excluded).</summary>
    public long Flushes => Volatile.Read(ref _flushes);

    /// <summary>Compactions completed, trivial moves included.</summary>
    public long Compactions => Volatile.Read(ref _compactions);

    public long TrivialMoves => Volatile.Read(ref _trivialMoves);

    /// <summary>Compactions of level 0 that reads asked for (<see cref="Level0ReadCharges"/>), included in <see cref="Compactions"/>.</summary>
    public long ReadTriggeredCompactions => Volatile.Read(ref _readTriggeredCompactions);

    public void AddReadTriggeredCompaction() => Interlocked.Increment(ref _readTriggeredCompactions);

    /// <summary>Microseconds writers spent delayed or stopped by level-0 triggers or by full memtables (MaxWriteBufferNumber).</summary>
    public long StallMicros => Volatile.Read(ref _stallMicros);

    public void AddCompaction(long readBytes, long writeBytes, bool trivialMove)
    {
        Interlocked.Add(ref _compactReadBytes, readBytes);
        Interlocked.Add(ref _compactWriteBytes, writeBytes);
        Interlocked.Increment(ref _compactions);
        if (trivialMove)
        {
            Interlocked.Increment(ref _trivialMoves);
        }
        if (_stats != null)
        {
            _stats.Record(Ticker.CompactReadBytes, readBytes);
            _stats.Record(Ticker.CompactWriteBytes, writeBytes);
        }
    }

    /// <summary>Values a compaction filter removed (rocksdb.compaction.key.drop.user).</summary>
    public long KeysDroppedByFilter => Volatile.Read(ref _keysDroppedByFilter);

    public void AddKeysDroppedByFilter(long count)
    {
        if (count == 0)
        {
            return;
        }
        Interlocked.Add(ref _keysDroppedByFilter, count);
        _stats?.Record(Ticker.CompactionKeyDropUser, count);
    }

    public void AddFlush(long writeBytes)
    {
        Interlocked.Add(ref _flushWriteBytes, writeBytes);
        Interlocked.Increment(ref _flushes);
        _stats?.Record(Ticker.FlushWriteBytes, writeBytes);
    }

    public void AddStall(long micros)
    {
        Interlocked.Add(ref _stallMicros, micros);
        _stats?.Record(Ticker.StallMicros, micros);
    }

    /// <summary>Every counter with its RocksDB ticker name (kvengine.* where RocksDB has none).</summary>
    public IReadOnlyList<KeyValuePair<string, long>> ToList() => new KeyValuePair<string, long>[]
    {
        new("rocksdb.compact.read.bytes", CompactReadBytes),
        new("rocksdb.compact.write.bytes", CompactWriteBytes),
        new("rocksdb.flush.write.bytes", FlushWriteBytes),
        new("rocksdb.stall.micros", StallMicros),
        new("kvengine.compactions", Compactions),
        new("kvengine.trivial.moves", TrivialMoves),
        new("kvengine.compactions.read_triggered", ReadTriggeredCompactions),
    };
}
