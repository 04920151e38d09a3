namespace KvEngine.Tests.Metamorphic;

/// <summary>
/// Cuts a failing op log down (delta debugging over its operations): removes runs of operations,
/// halving their length, for as long as the log stays well-formed (<see cref="IsWellFormed"/>) and
/// the check still finds a divergence between the model and a configuration. The result is a log
/// in which no single operation can be removed. Stateless.
/// </summary>
internal static class MetaReducer
{
    /// <param name="fails">Runs a candidate log; true when it still shows the failure.</param>
    public static MetaLog Reduce(MetaLog log, Func<MetaLog, bool> fails)
    {
        List<MetaOp> ops = [.. log.Ops];
        for (int chunk = Math.Max(1, ops.Count / 2); chunk >= 1; chunk /= 2)
        {
            bool removed;
            do
            {
                removed = false;
                for (int start = ops.Count - chunk; start >= 0 && ops.Count > 1; start -= chunk)
                {
                    List<MetaOp> candidate = [.. ops[..start], .. ops[(start + chunk)..]];
                    var next = new MetaLog(log.Families, log.UInt64Add, candidate, log.Comment + ", reduced");
                    if (IsWellFormed(next) && fails(next))
                    {
                        ops = candidate;
                        removed = true;
                        start = Math.Min(start, ops.Count);
                    }
                }
            }
            while (removed);
        }
        return new MetaLog(log.Families, log.UInt64Add, ops, log.Comment + ", reduced");
    }

    /// <summary>
    /// Whether a log keeps the generator's rules: iterators and snapshots are used only while they
    /// exist, none is alive across a reopen, a snapshot an open iterator reads is not released,
    /// and the "sdk" keys see only a Put while absent and a SingleDelete while present.
    /// </summary>
    public static bool IsWellFormed(MetaLog log)
    {
        var snapshots = new HashSet<int>();
        var iterators = new Dictionary<int, int>();
        var present = new HashSet<(int, string)>();
        foreach (MetaOp op in log.Ops)
        {
            switch (op.Kind)
            {
                case MetaOpKind.Snapshot:
                    if (!snapshots.Add(op.Id))
                    {
                        return false;
                    }
                    break;
                case MetaOpKind.Release:
                    if (!snapshots.Remove(op.Id) || iterators.ContainsValue(op.Id))
                    {
                        return false;
                    }
                    break;
                case MetaOpKind.Iter:
                    if ((op.Snapshot >= 0 && !snapshots.Contains(op.Snapshot)) || !iterators.TryAdd(op.Id, op.Snapshot))
                    {
                        return false;
                    }
                    break;
                case MetaOpKind.CloseIter:
                    if (!iterators.Remove(op.Id))
                    {
                        return false;
                    }
                    break;
                case MetaOpKind.Seek:
                case MetaOpKind.SeekForPrev:
                case MetaOpKind.First:
                case MetaOpKind.Last:
                case MetaOpKind.Next:
                case MetaOpKind.Prev:
                    if (!iterators.ContainsKey(op.Id))
                    {
                        return false;
                    }
                    break;
                case MetaOpKind.Get:
                case MetaOpKind.MultiGet:
                case MetaOpKind.Scan:
                case MetaOpKind.ReverseScan:
                    if (op.Snapshot >= 0 && !snapshots.Contains(op.Snapshot))
                    {
                        return false;
                    }
                    break;
                case MetaOpKind.Reopen:
                    if (snapshots.Count > 0 || iterators.Count > 0)
                    {
                        return false;
                    }
                    break;
                case MetaOpKind.Batch:
                    foreach (MetaOp r in op.Records!)
                    {
                        if (!SingleDeleteLegal(r, present))
                        {
                            return false;
                        }
                    }
                    break;
                default:
                    if (op.IsWrite && !SingleDeleteLegal(op, present))
                    {
                        return false;
                    }
                    break;
            }
        }
        return true;
    }

    private static bool SingleDeleteLegal(MetaOp r, HashSet<(int, string)> present)
    {
        bool sdKey = r.Key != null && r.Key.StartsWith("sdk", StringComparison.Ordinal);
        return r.Kind switch
        {
            MetaOpKind.Put when sdKey => present.Add((r.Family, r.Key!)),
            MetaOpKind.SingleDelete => sdKey && present.Remove((r.Family, r.Key!)),
            MetaOpKind.Merge or MetaOpKind.Delete => !sdKey,
            _ => true,
        };
    }
}
