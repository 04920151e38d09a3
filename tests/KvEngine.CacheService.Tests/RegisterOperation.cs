namespace KvEngine.CacheService.Tests;

/// <summary>
/// One operation on a single-key register as a client saw it: a write of <see cref="Value"/> or a
/// read that returned <see cref="Value"/> (null: the key had no value), invoked at
/// <see cref="Call"/> and answered at <see cref="Return"/> (ticks of one monotonic clock). A write
/// whose answer never came (an error, a timeout) has <see cref="Return"/> = long.MaxValue: it may
/// have taken effect at any time after its call, or never. Immutable.
/// </summary>
internal readonly record struct RegisterOperation(bool IsWrite, string? Value, long Call, long Return)
{
    public bool Completed => Return != long.MaxValue;
}
