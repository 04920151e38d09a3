namespace KvEngine.Stress;

/// <summary>
/// One write to one key since the last power-loss verification: the state it set, the logical
/// clock when it started and when it was acknowledged (<see cref="long.MaxValue"/>: it failed or
/// was cut off, so it may or may not have happened), the operation it belongs to (a WriteBatch or
/// DeleteRange spans keys), and whether it was itself synced. Immutable value type.
/// </summary>
internal readonly record struct HistoryEntry(ExpectedValue Value, long Start, long Ack, long OpId, bool Synced)
{
    public bool Acknowledged => Ack != long.MaxValue;

    public override string ToString() =>
        $"{Value.Settled} start {Start} " + (Acknowledged ? $"ack {Ack}" : "unacknowledged") + (Synced ? " synced" : "") + $" op {OpId}";
}
