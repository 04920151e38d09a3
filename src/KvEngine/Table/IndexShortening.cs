namespace KvEngine.Table;

/// <summary>RocksDB's BlockBasedTableOptions::IndexShorteningMode: how index keys are chosen.</summary>
internal enum IndexShortening
{
    /// <summary>Index keys are the last key of each block.</summary>
    None,

    /// <summary>Shortest separator between blocks; the last block keeps its last key (RocksDB's default).</summary>
    ShortenSeparators,

    /// <summary>Also replaces the last block's key with a short successor.</summary>
    ShortenSeparatorsAndSuccessor,
}
