namespace KvEngine.Stress;

/// <summary>
/// One key's expected state in 32 bits (RocksDB db_stress's ExpectedValue): bits 0-29 the
/// value base (bumped by every write to the key, deletes included, so no two writes to a key look
/// alike), bit 30 "exists", bit 31 "pending" (only in the pending slot). 0 is "never written".
/// Immutable value type.
/// </summary>
internal readonly record struct ExpectedValue(uint Raw)
{
    public const uint BaseMask = (1u << 30) - 1;
    public const uint ExistsBit = 1u << 30;
    public const uint PendingBit = 1u << 31;

    public bool Exists => (Raw & ExistsBit) != 0;

    public bool Pending => (Raw & PendingBit) != 0;

    public uint Base => Raw & BaseMask;

    /// <summary>This value without the pending bit.</summary>
    public ExpectedValue Settled => new(Raw & ~PendingBit);

    public static ExpectedValue Put(uint valueBase) => new((valueBase & BaseMask) | ExistsBit);

    public static ExpectedValue Deleted(uint valueBase) => new(valueBase & BaseMask);

    /// <summary>Whether a read that found <paramref name="value"/> (null: absent) agrees with this state.</summary>
    public bool Matches(byte[]? value, long key, int valueSizeMult) =>
        Exists ? value != null && StressKeys.ValueMatches(key, Base, value, valueSizeMult) : value == null;

    public override string ToString() =>
        (Exists ? "value(base " + Base + ")" : "absent(base " + Base + ")") + (Pending ? " pending" : "");
}
