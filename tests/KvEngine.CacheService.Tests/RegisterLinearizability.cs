namespace KvEngine.CacheService.Tests;

/// <summary>
/// Checks that a single register's history is linearizable (Herlihy and Wing): some total order of
/// the operations respects real time (an operation answered before another was invoked comes
/// first) and register semantics (a read returns the last write before it, or null before any).
/// Wing and Gong's search with Lowe's memoization of (linearized set, register value): at each
/// step, any pending operation invoked before every other pending one was answered may go next.
/// Writes without an answer may be placed anywhere after their call or left out; every answered
/// operation must be placed. Exponential in the worst case, fast for the few concurrent clients
/// of the fault test. Stateless and thread-safe.
/// </summary>
internal static class RegisterLinearizability
{
    /// <summary>True when <paramref name="history"/> (one register, initially null) is linearizable.</summary>
    /// <exception cref="ArgumentException">A read has no answer (unanswered reads must be left out).</exception>
    public static bool Check(IReadOnlyList<RegisterOperation> history)
    {
        foreach (RegisterOperation op in history)
        {
            if (!op.IsWrite && !op.Completed)
            {
                throw new ArgumentException("An unanswered read constrains nothing: leave it out of the history.", nameof(history));
            }
        }
        // An unanswered write whose value no read returned can be left out: in any order that
        // places it, only reads of its own value could follow it before the next write, and there
        // are none. This keeps the search small when many writes failed (a node was down).
        var read = new HashSet<string?>(history.Where(o => !o.IsWrite).Select(o => o.Value), StringComparer.Ordinal);
        RegisterOperation[] ops = [.. history.Where(o => o.Completed || read.Contains(o.Value)).OrderBy(o => o.Call)];
        int required = ops.Count(o => o.Completed);
        var linearized = new bool[ops.Length];
        var seen = new HashSet<string>(StringComparer.Ordinal);
        return Search(ops, linearized, 0, required, null, seen);
    }

    private static bool Search(RegisterOperation[] ops, bool[] linearized, int placed, int required, string? value, HashSet<string> seen)
    {
        if (placed == required)
        {
            return true; // every answered operation has a place; unanswered writes may never have happened
        }
        if (!seen.Add(Key(linearized, value)))
        {
            return false;
        }
        // The earliest answer among pending operations bounds which ones may go next.
        long bound = long.MaxValue;
        for (int i = 0; i < ops.Length; i++)
        {
            if (!linearized[i] && ops[i].Return < bound)
            {
                bound = ops[i].Return;
            }
        }
        for (int i = 0; i < ops.Length && ops[i].Call <= bound; i++)
        {
            if (linearized[i])
            {
                continue;
            }
            RegisterOperation op = ops[i];
            if (!op.IsWrite && op.Value != value)
            {
                continue;
            }
            linearized[i] = true;
            bool found = Search(ops, linearized, op.Completed ? placed + 1 : placed, required, op.IsWrite ? op.Value : value, seen);
            linearized[i] = false;
            if (found)
            {
                return true;
            }
        }
        return false;
    }

    private static string Key(bool[] linearized, string? value)
    {
        var chars = new char[linearized.Length + 1 + (value?.Length ?? 1)];
        for (int i = 0; i < linearized.Length; i++)
        {
            chars[i] = linearized[i] ? '1' : '0';
        }
        chars[linearized.Length] = '|';
        (value ?? "\0").CopyTo(0, chars, linearized.Length + 1, value?.Length ?? 1);
        return new string(chars);
    }
}
