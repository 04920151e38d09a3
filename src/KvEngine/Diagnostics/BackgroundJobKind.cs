namespace KvEngine.Diagnostics;

/// <summary>The operation whose failure stopped the database (a log field); not persisted.</summary>
internal enum BackgroundJobKind
{
    /// <summary>Appending to or syncing the write-ahead log.</summary>
    WalWrite,

    /// <summary>Inserting a committed batch into the memtable.</summary>
    MemTableInsert,

    /// <summary>Writing a memtable into a level-0 table.</summary>
    Flush,

    /// <summary>A compaction (background or manual).</summary>
    Compaction,

    /// <summary>Starting a new WAL at a memtable switch: creating it, or recording it in the MANIFEST.</summary>
    MemTableSwitch,
}
