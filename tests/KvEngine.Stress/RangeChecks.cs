namespace KvEngine.Stress;

/// <summary>
/// Iterator checks over a key range whose expected state is fixed while they run (the caller's own
/// stripe, or a snapshot's capture): a bounded forward scan that must list exactly the keys
/// expected to exist, and a random walk (Seek/SeekForPrev/SeekToFirst/SeekToLast then Next/Prev,
/// switching direction) checked at every step. With several column families (key i in family
/// i % N, <see cref="StressFamilies"/>) a scan covers each family's keys of the range in turn, and a
/// walk one random family's. Stateless; each call uses only its arguments.
/// </summary>
internal static class RangeChecks
{
    /// <summary>The expected state of keys [lo, hi) now.</summary>
    public static ExpectedValue[] Capture(ExpectedState state, long lo, long hi)
    {
        var values = new ExpectedValue[hi - lo];
        for (long k = lo; k < hi; k++)
        {
            values[k - lo] = state.Committed(k);
        }
        return values;
    }

    /// <summary>Scans [lo, hi) forward in every family with both bounds set; throws on any difference. Returns the keys checked.</summary>
    public static long Scan(KvDb db, ColumnFamilyHandle[] families, Snapshot? snapshot, long lo, long hi, ExpectedValue[] expected, int mult, string what)
    {
        for (int f = 0; f < families.Length; f++)
        {
            ScanFamily(db, new Family(families, f), snapshot, lo, hi, expected, mult, families.Length == 1 ? what : $"{what} (family {families[f]})");
        }
        return hi - lo;
    }

    private static void ScanFamily(KvDb db, Family family, Snapshot? snapshot, long lo, long hi, ExpectedValue[] expected, int mult, string what)
    {
        var ro = new ReadOptions { Snapshot = snapshot, IterateLowerBound = StressKeys.Key(lo), IterateUpperBound = StressKeys.Key(hi) };
        using KvIterator it = db.NewIterator(family.Handle, ro);
        it.Seek(StressKeys.Key(lo));
        long next = NextExisting(expected, lo, lo, hi, lo, family);
        while (it.Valid)
        {
            long k = StressKeys.Index(it.Key);
            if (k != next)
            {
                throw new VerificationException(next < 0
                    ? $"{what}: iterator over [{lo}, {hi}) shows key {k} ({StressKeys.Describe(k, it.Value, mult)}), expected no more keys"
                    : $"{what}: iterator over [{lo}, {hi}) shows key {k}, expected key {next} ({expected[next - lo]}){ExpectedOf(k, lo, hi, expected)}");
            }
            CheckValue(k, it.Value, expected[k - lo], mult, what);
            it.Next();
            next = NextExisting(expected, k + 1, lo, hi, lo, family);
        }
        if (next >= 0)
        {
            throw new VerificationException($"{what}: iterator over [{lo}, {hi}) ended, but key {next} should be there ({expected[next - lo]})");
        }
    }

    /// <summary>A random positioning and up to 12 random Next/Prev steps inside a random sub-range of [lo, hi) of a random family.</summary>
    public static int RandomWalk(KvDb db, ColumnFamilyHandle[] families, ExpectedValue[] expected, long lo, long hi, Random rng, int mult)
    {
        var family = new Family(families, rng.Next(families.Length));
        long lb = lo, ub = hi;
        if (rng.Next(2) == 0 && hi - lo > 2)
        {
            lb = lo + rng.NextInt64(hi - lo - 1);
            ub = lb + 1 + rng.NextInt64(hi - lb);
        }
        var ro = new ReadOptions { IterateLowerBound = StressKeys.Key(lb), IterateUpperBound = StressKeys.Key(ub) };
        using KvIterator it = db.NewIterator(family.Handle, ro);
        long target = lb + rng.NextInt64(ub - lb);
        long at;
        string how;
        switch (rng.Next(4))
        {
            case 0:
                it.Seek(StressKeys.Key(target));
                at = NextExisting(expected, target, lb, ub, lo, family);
                how = $"Seek({target})";
                break;
            case 1:
                it.SeekForPrev(StressKeys.Key(target));
                at = PrevExisting(expected, target, lb, lo, family);
                how = $"SeekForPrev({target})";
                break;
            case 2:
                it.SeekToFirst();
                at = NextExisting(expected, lb, lb, ub, lo, family);
                how = "SeekToFirst";
                break;
            default:
                it.SeekToLast();
                at = PrevExisting(expected, ub - 1, lb, lo, family);
                how = "SeekToLast";
                break;
        }
        int steps = 0;
        while (true)
        {
            string what = $"iterator [{lb}, {ub}){(families.Length == 1 ? "" : $" of family {family.Handle}")} after {how}";
            if (at < 0)
            {
                if (it.Valid)
                {
                    long k = StressKeys.Index(it.Key);
                    throw new VerificationException($"{what}: positioned on key {k} ({StressKeys.Describe(k, it.Value, mult)}), expected not valid");
                }
                return steps;
            }
            if (!it.Valid)
            {
                throw new VerificationException($"{what}: not valid, expected key {at} ({expected[at - lo]})");
            }
            long key = StressKeys.Index(it.Key);
            if (key != at)
            {
                throw new VerificationException($"{what}: on key {key}, expected key {at} ({expected[at - lo]})");
            }
            CheckValue(key, it.Value, expected[key - lo], mult, what);
            if (++steps > 12)
            {
                return steps;
            }
            if (rng.Next(2) == 0)
            {
                it.Next();
                at = NextExisting(expected, key + 1, lb, ub, lo, family);
                how += ",Next";
            }
            else
            {
                it.Prev();
                at = PrevExisting(expected, key - 1, lb, lo, family);
                how += ",Prev";
            }
        }
    }

    private static void CheckValue(long key, ReadOnlySpan<byte> value, ExpectedValue expected, int mult, string what)
    {
        if (!expected.Exists || !StressKeys.ValueMatches(key, expected.Base, value, mult))
        {
            throw new VerificationException($"{what}: key {key} has {StressKeys.Describe(key, value, mult)}, expected {expected}");
        }
    }

    private static string ExpectedOf(long k, long lo, long hi, ExpectedValue[] expected) =>
        k >= lo && k < hi ? $"; key {k} is expected {expected[k - lo]}" : $"; key {k} is outside the range";

    // First key of the family >= from and < hi expected to exist; expected[] starts at key 'origin'.
    private static long NextExisting(ExpectedValue[] expected, long from, long lb, long hi, long origin, Family family)
    {
        for (long k = Math.Max(from, lb); k < hi; k++)
        {
            if (expected[k - origin].Exists && family.Holds(k))
            {
                return k;
            }
        }
        return -1;
    }

    // Last key of the family <= from and >= lb expected to exist.
    private static long PrevExisting(ExpectedValue[] expected, long from, long lb, long origin, Family family)
    {
        for (long k = from; k >= lb; k--)
        {
            if (expected[k - origin].Exists && family.Holds(k))
            {
                return k;
            }
        }
        return -1;
    }

    /// <summary>Family <see cref="Index"/> of the run's families: its handle, and which keys it holds.</summary>
    private readonly record struct Family(ColumnFamilyHandle[] All, int Index)
    {
        public ColumnFamilyHandle Handle => All[Index];

        public bool Holds(long key) => StressFamilies.Of(key, All.Length) == Index;
    }
}
