using KvEngine.Table;

namespace KvEngine.Merge;

/// <summary>
/// Refuses tables that hold merge operands the configured operator cannot be trusted with: none
/// configured, or one whose name differs from the table's <c>rocksdb.merge.operator</c> property.
/// (RocksDB 7.8 only refuses the read that meets the operands, and silently hands them to a renamed
/// operator; KvEngine refuses as soon as such a table is opened, so wrong values are never read.)
/// A table without operands is accepted whatever its property says. Stateless, thread-safe.
/// </summary>
internal static class MergeOperatorCheck
{
    /// <summary>The name RocksDB writes when no operator is configured.</summary>
    public const string NoOperatorName = "nullptr";

    /// <summary>Throws <see cref="KvException"/> when <paramref name="properties"/> hold operands <paramref name="configured"/> may not merge.</summary>
    public static void ThrowIfIncompatible(TableProperties properties, string? configured, string fileName)
    {
        if (properties.NumMergeOperands == 0)
        {
            return;
        }
        string written = properties.MergeOperatorName;
        if (configured is null)
        {
            throw new KvException(
                $"{MergeHelper.NotInitializedMessage} {fileName} holds {properties.NumMergeOperands} merge operands (written with operator '{written}'); " +
                "set ColumnFamilyOptions.MergeOperator to that operator.", KvStatusCode.InvalidArgument, KvStatusSubCode.None, null);
        }
        // A table written without an operator ("nullptr" or empty) may hold operands from a log replayed by RocksDB: accept it.
        if (written.Length != 0 && written != NoOperatorName && written != configured)
        {
            throw new KvException(
                $"{fileName} holds merge operands written with the merge operator '{written}', but '{configured}' is configured.", KvStatusCode.InvalidArgument, KvStatusSubCode.None, null);
        }
    }
}
