namespace KvEngine;

/// <summary>The kind of one write in a WAL record (see <see cref="WalOperation"/>).</summary>
public enum WalOperationType
{
    /// <summary>A put of <see cref="WalOperation.Key"/> to <see cref="WalOperation.Value"/> (ldb: PUT).</summary>
    Put,

    /// <summary>A deletion of <see cref="WalOperation.Key"/> (ldb: DELETE).</summary>
    Delete,

    /// <summary>A single deletion of <see cref="WalOperation.Key"/> (ldb: SINGLE_DELETE).</summary>
    SingleDelete,

    /// <summary>A deletion of [<see cref="WalOperation.Key"/>, <see cref="WalOperation.Value"/>) (ldb: DELETE_RANGE).</summary>
    DeleteRange,

    /// <summary>A merge operand <see cref="WalOperation.Value"/> for <see cref="WalOperation.Key"/> (ldb: MERGE).</summary>
    Merge,
}
