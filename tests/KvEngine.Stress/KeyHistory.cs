namespace KvEngine.Stress;

/// <summary>
/// A key's writes since the last power-loss verification: position 0 is <see cref="Initial"/>
/// (the verified state the cycle started from, durable), positions 1..n the
/// <see cref="Entries"/> in order (a key is written by one thread only, so its entries are
/// ordered). Owned by the key's thread while workers run; read by the verifier after they stopped.
/// </summary>
internal sealed class KeyHistory
{
    public KeyHistory(ExpectedValue initial) => Initial = initial;

    public ExpectedValue Initial { get; }

    public List<HistoryEntry> Entries { get; } = new();

    /// <summary>Number of positions (the initial state plus every entry).</summary>
    public int Count => Entries.Count + 1;

    public ExpectedValue At(int position) => position == 0 ? Initial : Entries[position - 1].Value;

    /// <summary>The highest value base any position used, so later writes stay distinguishable.</summary>
    public uint MaxBase()
    {
        uint b = Initial.Base;
        foreach (HistoryEntry e in Entries)
        {
            b = Math.Max(b, e.Value.Base);
        }
        return b;
    }

    public string Describe(int from)
    {
        var parts = new List<string>();
        for (int p = from; p < Count; p++)
        {
            parts.Add(p == 0 ? $"[0] initial {Initial}" : $"[{p}] {Entries[p - 1]}");
        }
        return string.Join("; ", parts);
    }
}
