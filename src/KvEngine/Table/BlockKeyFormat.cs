namespace KvEngine.Table;

/// <summary>How a block's keys compare with a seek target.</summary>
internal enum BlockKeyFormat
{
    /// <summary>Keys and targets are internal keys (data blocks, index blocks with sequence numbers, range deletions).</summary>
    InternalKey,

    /// <summary>Keys are user keys, targets internal keys: an index written with index_key_is_user_key.</summary>
    UserKeyIndex,

    /// <summary>Keys and targets are plain bytes (metaindex, properties).</summary>
    Bytewise,
}
