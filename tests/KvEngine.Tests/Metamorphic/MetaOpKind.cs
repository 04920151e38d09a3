namespace KvEngine.Tests.Metamorphic;

/// <summary>
/// The operations of a metamorphic op log. Each has one text form (<see cref="MetaOp.ToString"/>),
/// the word it starts with being the lower-cased name.
/// </summary>
internal enum MetaOpKind
{
    Put,
    Merge,
    Delete,
    SingleDelete,
    DeleteRange,

    /// <summary>A WriteBatch of the <see cref="MetaOp.Records"/> (writes of any family), atomic.</summary>
    Batch,

    /// <summary>An SstFileWriter file of the <see cref="MetaOp.Records"/> ingested into one family.</summary>
    Ingest,
    Snapshot,
    Release,
    Get,
    MultiGet,

    /// <summary>A full forward scan of a family (at the latest state or a snapshot).</summary>
    Scan,

    /// <summary>A full reverse scan of a family.</summary>
    ReverseScan,

    /// <summary>Creates iterator <see cref="MetaOp.Id"/>: family, snapshot, bounds, prefix mode.</summary>
    Iter,
    Seek,
    SeekForPrev,
    First,
    Last,
    Next,
    Prev,
    CloseIter,
    Flush,
    Compact,

    /// <summary>Close and open again (no iterator or snapshot is alive across it).</summary>
    Reopen,

    /// <summary>CreateCheckpoint, open it read-only and scan every family.</summary>
    Checkpoint,
}
