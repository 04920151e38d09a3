namespace KvEngine.Fuzz.Targets;

/// <summary>
/// The fuzz targets by name and the verdict on one input. A target feeds the bytes to a decoder the
/// way the engine does when it opens or recovers a database; the only exceptions corrupt input may
/// raise are the engine's typed ones (<see cref="KvException"/>, which includes
/// <see cref="KvCorruptionException"/>). <see cref="Execute"/> swallows those and lets anything else
/// escape — IndexOutOfRange, NullReference, ArgumentOutOfRange from the BCL, Overflow,
/// InvalidCast, or a <see cref="FuzzFindingException"/> for an absurd allocation — which the fuzzer
/// (or the replay test) reports as a finding. Stateless apart from the targets' shared option
/// objects; one input at a time per thread.
/// </summary>
internal static class FuzzTargets
{
    /// <summary>Managed bytes one input may allocate before it counts as an absurd allocation.</summary>
    public const long AllocationLimit = 256L << 20;

    /// <summary>Every target, in the order the corpora and docs list them.</summary>
    public static IReadOnlyList<string> Names { get; } = ["table", "wal", "manifest", "writebatch"];

    /// <summary>Runs <paramref name="input"/> through target <paramref name="name"/>; typed exceptions propagate.</summary>
    public static void Run(string name, ReadOnlySpan<byte> input)
    {
        switch (name)
        {
            case "table":
                TableTarget.Run(input);
                break;
            case "wal":
                LogTarget.Run(input);
                break;
            case "manifest":
                ManifestTarget.Run(input);
                break;
            case "writebatch":
                WriteBatchTarget.Run(input);
                break;
            default:
                throw new ArgumentException($"Unknown fuzz target '{name}'; targets: {string.Join(", ", Names)}.", nameof(name));
        }
    }

    /// <summary>
    /// Runs one input: true when the target read it without complaint, false when the engine
    /// rejected it with a typed exception; throws (the finding) otherwise.
    /// </summary>
    public static bool Execute(string name, ReadOnlySpan<byte> input)
    {
        long before = GC.GetAllocatedBytesForCurrentThread();
        bool accepted = true;
        try
        {
            Run(name, input);
        }
        catch (KvException)
        {
            accepted = false; // corrupt or unsupported input, reported the way the engine promises
        }
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        if (allocated > AllocationLimit)
        {
            throw new FuzzFindingException(
                $"Target '{name}' allocated {allocated:N0} managed bytes for a {input.Length}-byte input (limit {AllocationLimit:N0}).");
        }
        return accepted;
    }
}
