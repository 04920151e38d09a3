using System.Globalization;
using System.Text;

namespace KvEngine.Tests.Metamorphic;

/// <summary>
/// Runs an op log against one <see cref="IMetaTarget"/> and returns one text result per operation:
/// "ok" for a write or a change of state, the value (or <see cref="MetaValues.Absent"/>) of a Get,
/// the values of a MultiGet, "key=value" (or <see cref="MetaValues.Invalid"/>) where an iterator
/// stands after each move, every pair of a scan, and every family of an opened checkpoint. Two
/// targets that ran the same log must return equal arrays. An iterator that is not Valid is not
/// moved by Next or Prev (its result stays <see cref="MetaValues.Invalid"/>). Stateless.
/// </summary>
internal static class MetaExecutor
{
    public const string Ok = "ok";

    /// <summary>Values longer than this are shown as their head, length and hash.</summary>
    private const int ShownValueLength = 48;

    /// <param name="onOp">Called before each operation with its index (progress, fault hooks).</param>
    public static string[] Run(MetaLog log, IMetaTarget target, Action<int>? onOp = null)
    {
        var results = new string[log.Ops.Count];
        var iterators = new Dictionary<int, IMetaCursor>();
        try
        {
            for (int i = 0; i < log.Ops.Count; i++)
            {
                onOp?.Invoke(i);
                results[i] = Step(log.Ops[i], target, iterators);
            }
        }
        finally
        {
            foreach (IMetaCursor c in iterators.Values)
            {
                c.Dispose();
            }
        }
        return results;
    }

    private static string Step(MetaOp op, IMetaTarget target, Dictionary<int, IMetaCursor> iterators)
    {
        switch (op.Kind)
        {
            case MetaOpKind.Put:
            case MetaOpKind.Merge:
            case MetaOpKind.Delete:
            case MetaOpKind.SingleDelete:
            case MetaOpKind.DeleteRange:
            case MetaOpKind.Batch:
                target.Write(op);
                return Ok;
            case MetaOpKind.Ingest:
                target.Ingest(op);
                return Ok;
            case MetaOpKind.Snapshot:
                target.TakeSnapshot(op.Id);
                return Ok;
            case MetaOpKind.Release:
                target.ReleaseSnapshot(op.Id);
                return Ok;
            case MetaOpKind.Get:
                return ShowValue(target.Get(op.Family, MetaValues.Key(op.Key!), op.Snapshot));
            case MetaOpKind.MultiGet:
                {
                    var keys = new List<byte[]>(op.Keys!.Count);
                    foreach (string k in op.Keys)
                    {
                        keys.Add(MetaValues.Key(k));
                    }
                    byte[]?[] values = target.MultiGet(op.Family, keys, op.Snapshot);
                    var sb = new StringBuilder();
                    foreach (byte[]? v in values)
                    {
                        sb.Append(sb.Length == 0 ? "" : " ").Append(ShowValue(v));
                    }
                    return sb.ToString();
                }
            case MetaOpKind.Scan:
            case MetaOpKind.ReverseScan:
                return Scan(target, op.Family, op.Snapshot, op.Kind == MetaOpKind.ReverseScan);
            case MetaOpKind.Iter:
                {
                    byte[]? lower = op.Key == null ? null : MetaValues.Key(op.Key);
                    byte[]? upper = op.End == null ? null : MetaValues.Key(op.End);
                    IMetaCursor c = op.PrefixMode && !target.ConfinesPrefixes
                        ? new ConfinedCursor(target.NewCursor(op.Family, op.Snapshot, lower, upper, prefixMode: false))
                        : target.NewCursor(op.Family, op.Snapshot, lower, upper, op.PrefixMode);
                    if (iterators.Remove(op.Id, out IMetaCursor? old))
                    {
                        old.Dispose();
                    }
                    iterators.Add(op.Id, c);
                    return Ok;
                }
            case MetaOpKind.CloseIter:
                if (iterators.Remove(op.Id, out IMetaCursor? closed))
                {
                    closed.Dispose();
                }
                return Ok;
            case MetaOpKind.Seek:
            case MetaOpKind.SeekForPrev:
            case MetaOpKind.First:
            case MetaOpKind.Last:
            case MetaOpKind.Next:
            case MetaOpKind.Prev:
                return Move(op, iterators.TryGetValue(op.Id, out IMetaCursor? it) ? it : throw new InvalidOperationException($"'{op}': no iterator i{op.Id}"));
            case MetaOpKind.Flush:
                target.Flush(op.Family);
                return Ok;
            case MetaOpKind.Compact:
                target.Compact(op.Family, op.Key == null ? null : MetaValues.Key(op.Key), op.End == null ? null : MetaValues.Key(op.End));
                return Ok;
            case MetaOpKind.Reopen:
                if (iterators.Count > 0)
                {
                    throw new InvalidOperationException("reopen with iterators open");
                }
                target.Reopen();
                return Ok;
            case MetaOpKind.Checkpoint:
                {
                    using IMetaReader checkpoint = target.Checkpoint();
                    var sb = new StringBuilder();
                    for (int f = 0; f < target.Families; f++)
                    {
                        sb.Append("cf").Append(f.ToString(CultureInfo.InvariantCulture)).Append(": ").Append(Scan(checkpoint, f, -1, reverse: false)).Append(" / ");
                    }
                    return sb.ToString();
                }
            default:
                throw new InvalidOperationException(op.ToString());
        }
    }

    private static string Move(MetaOp op, IMetaCursor it)
    {
        switch (op.Kind)
        {
            case MetaOpKind.Seek:
                it.Seek(MetaValues.Key(op.Key!));
                break;
            case MetaOpKind.SeekForPrev:
                it.SeekForPrev(MetaValues.Key(op.Key!));
                break;
            case MetaOpKind.First:
                it.SeekToFirst();
                break;
            case MetaOpKind.Last:
                it.SeekToLast();
                break;
            case MetaOpKind.Next:
                if (it.Valid)
                {
                    it.Next();
                }
                break;
            default:
                if (it.Valid)
                {
                    it.Prev();
                }
                break;
        }
        return it.Valid ? MetaValues.Show(it.Key) + "=" + ShowValue(it.Value) : MetaValues.Invalid;
    }

    private static string Scan(IMetaReader reader, int family, int snapshot, bool reverse)
    {
        using IMetaCursor c = reader.NewCursor(family, snapshot, null, null, prefixMode: false);
        var sb = new StringBuilder();
        int n = 0;
        if (reverse)
        {
            c.SeekToLast();
        }
        else
        {
            c.SeekToFirst();
        }
        while (c.Valid)
        {
            sb.Append(MetaValues.Show(c.Key)).Append('=').Append(ShowValue(c.Value)).Append(' ');
            n++;
            if (reverse)
            {
                c.Prev();
            }
            else
            {
                c.Next();
            }
        }
        return n.ToString(CultureInfo.InvariantCulture) + " keys: " + sb.ToString();
    }

    /// <summary>A value as text; one longer than <see cref="ShownValueLength"/> bytes as its head, length and FNV-1a hash.</summary>
    public static string ShowValue(ReadOnlySpan<byte> value)
    {
        if (value.Length <= ShownValueLength)
        {
            return MetaValues.Show(value);
        }
        ulong h = 14695981039346656037;
        foreach (byte b in value)
        {
            h = (h ^ b) * 1099511628211;
        }
        return MetaValues.Show(value[..16]) + "..[" + value.Length.ToString(CultureInfo.InvariantCulture) + "#" + h.ToString("x16", CultureInfo.InvariantCulture) + "]";
    }

    private static string ShowValue(byte[]? value) => value == null ? MetaValues.Absent : ShowValue(value.AsSpan());
}
