namespace KvEngine;

/// <summary>
/// Counters kept by <see cref="KvStatistics"/>. Each has RocksDB's ticker name (see
/// <see cref="KvStatistics.TickerName"/>), so tools that read RocksDB's statistics read ours.
/// </summary>
public enum Ticker
{
    BlockCacheMiss,
    BlockCacheHit,
    BloomFilterUseful,
    BloomFilterFullPositive,
    BloomFilterFullTruePositive,
    MemtableHit,
    MemtableMiss,
    GetHitL0,
    GetHitL1,
    GetHitL2AndUp,
    NumberKeysWritten,
    NumberKeysRead,
    BytesWritten,
    NumberDbSeek,
    NumberDbNext,
    NumberDbPrev,
    WalFileSynced,
    WalFileBytes,
    WriteDoneBySelf,
    WriteDoneByOther,
    FlushWriteBytes,
    CompactReadBytes,
    CompactWriteBytes,
    StallMicros,
    NoFileOpens,
    BlockReads,
    BlockReadBytes,
}
